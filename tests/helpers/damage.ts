import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Services } from '../../core/services/services';

/**
 * Makes a real workbench data directory whose database has 5,000 environments and then three
 * data pages overwritten mid-page, the way a disk or a copy goes wrong: the file still opens and
 * answers, with rows missing, which is what the integrity check at open must catch.
 */
export async function makeDamagedLibrary(dataDir: string, opts: { runningJob?: boolean } = {}): Promise<void> {
  const services = new Services({ dataDir, shell: 'in-process' });
  const db = services.db;
  const now = new Date().toISOString();
  const env = db.prepare("INSERT INTO environments (name, kind, head_hash, created_at, updated_at) VALUES (?, 'game', ?, ?, ?)");
  const ver = db.prepare('INSERT INTO versions (hash, env_id, source, bytes, created_at) VALUES (?, ?, ?, ?, ?)');
  db.transaction(() => {
    for (let i = 0; i < 5000; i++) {
      const id = Number(env.run(`Filler${i}Env`, `h${i}`, now, now).lastInsertRowid);
      ver.run(`h${i}`, id, `class Filler${i}Env: pass  # ${'x'.repeat(150)}`, 170, now);
    }
  })();
  if (opts.runningJob) {
    // A job the app will try to follow (and so write about) as soon as it starts.
    db.prepare("INSERT INTO jobs (id, name, backend, spec, state, created_at, updated_at) VALUES ('j-damaged', 'left running', 'local', ?, 'running', ?, ?)").run(
      JSON.stringify({ name: 'left running', backend: 'local', command: ['sleep', '1000'], workdir: '/tmp', env: {}, secretEnv: [] }),
      now,
      now,
    );
  }
  // Mark the seed pack as done so a web host on this directory does not try to import it.
  db.prepare("INSERT OR REPLACE INTO settings (key, value) VALUES ('memory.seedPackImported', '\"test\"')").run();
  db.pragma('wal_checkpoint(TRUNCATE)');
  // Damage lands on leaf pages of the versions table (source text), wherever the schema puts them:
  // fixed file offsets hit other tables' pages whenever a migration changed the layout.
  const leaves = (db.prepare("SELECT pageno FROM dbstat WHERE name = 'versions' AND pagetype = 'leaf' ORDER BY pageno").all() as { pageno: number }[]).map((r) => r.pageno);
  await services.close();
  const file = join(dataDir, 'workbench.sqlite');
  const fd = openSync(file, 'r+');
  const pick = [leaves[Math.floor(leaves.length / 3)]!, leaves[Math.floor(leaves.length / 2)]!, leaves[Math.floor((2 * leaves.length) / 3)]!];
  // dbstat numbers pages from 1.
  for (const k of pick) writeSync(fd, Buffer.alloc(2000, 0xab), 0, 2000, (k - 1) * 4096 + 1500);
  closeSync(fd);
}
