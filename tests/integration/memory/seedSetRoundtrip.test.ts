// What a new user did: marked a few games as seeds (one of them a tool-use game of their own, not
// from a release manifest), exported the seed set, and imported it again. The README promises
// "0 new, 0 updated"; the tool-use game came back "updated" (the export's own manifest entry was
// taken for new information). And an export of games that nothing measured writes no
// env_memory.json (SPADE needs numbers there): the export must say so instead of leaving it out
// silently.
import { afterEach, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../../core/memory/db';
import { importPaths } from '../../../core/memory/importer';
import { exportEnvironments, exportEnvironmentsAsync } from '../../../core/memory/exporter';
import { RunStore } from '../../../core/runs/runStore';
import { search, selectIds, setSeed, updateEnvironment } from '../../../core/memory/repository';
import { main } from '../../../core/cli/main';
import { tempDir } from '../../helpers/tmp';
import { gameSource, toolSource, write } from './fixtures';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function open(path: string): Db {
  const db = openDatabase(path);
  cleanups.push(() => void db.close());
  return db;
}

const state = (d: Db) =>
  JSON.stringify({
    envs: d.prepare('SELECT * FROM environments ORDER BY id').all(),
    hints: d.prepare('SELECT env_id, text FROM hints ORDER BY id').all(),
    tags: d.prepare('SELECT env_id, tag FROM tags ORDER BY env_id, tag').all(),
  });

it('re-imports an exported seed set with a tool-use game of its own as 0 new, 0 updated, into its library and into a fresh one', async () => {
  const tmp = tempDir('spade-seedset-');
  cleanups.push(tmp.cleanup);
  const db = open(join(tmp.dir, 'a.sqlite'));
  const src = join(tmp.dir, 'mine');
  // Loose files, as a person writes them: no release manifest, no spec.
  write(src, 'desk.py', toolSource(3, 'HelpDeskEnv'));
  write(src, 'desk_hint.txt', 'Look the ticket up first.');
  write(src, 'riddle.py', gameSource(5, 'RiddleEnv'));
  write(src, 'other.py', gameSource(6, 'OtherEnv'));
  await importPaths(db, [src]);
  const id = (name: string) => search(db, { query: '', limit: 10 }).rows.find((r) => r.name === name)!.id;
  setSeed(db, [id('HelpDeskEnv'), id('RiddleEnv')], true);
  updateEnvironment(db, id('HelpDeskEnv'), { rating: 4, notes: 'checked by hand' });

  const out = join(tmp.dir, 'seeds');
  const ids = selectIds(db, { seeds: true });
  expect(ids).toHaveLength(2);
  exportEnvironments(db, ids, { format: 'spade', outDir: out }, new RunStore(db));
  expect(existsSync(join(out, 'tool_use', 'manifest.json'))).toBe(true);

  const before = state(db);
  const back = await importPaths(db, [out]);
  expect({ imported: back.imported, updated: back.updated, unchanged: back.unchanged, skipped: back.skipped }).toEqual({ imported: 0, updated: 0, unchanged: 2, skipped: [] });
  expect(state(db)).toBe(before);

  // Into a fresh library, then once more: the second import changes nothing either, and the
  // tool-use game keeps what the person gave it (seed, rating, notes, hint).
  const db2 = open(join(tmp.dir, 'fresh.sqlite'));
  expect((await importPaths(db2, [out])).imported).toBe(2);
  const fresh = state(db2);
  const again = await importPaths(db2, [out]);
  expect({ imported: again.imported, updated: again.updated }).toEqual({ imported: 0, updated: 0 });
  expect(state(db2)).toBe(fresh);
  const desk = db2.prepare("SELECT seed, rating, notes, kind FROM environments WHERE name = 'HelpDeskEnv'").get();
  expect(desk).toEqual({ seed: 1, rating: 4, notes: 'checked by hand', kind: 'tool-use' });
});

it('says so when an export writes no env_memory.json because nothing was measured (the CLI and the API)', async () => {
  const tmp = tempDir('spade-nomemory-');
  cleanups.push(tmp.cleanup);
  const data = join(tmp.dir, 'data');
  const db = open(join(data, 'workbench.sqlite'));
  write(tmp.dir, 'src/riddle.py', gameSource(5, 'RiddleEnv'));
  await importPaths(db, [join(tmp.dir, 'src')]);
  const r = await exportEnvironmentsAsync(db, selectIds(db, {}), { format: 'spade', outDir: join(tmp.dir, 'out') }, new RunStore(db));
  expect(r.files).not.toContain('env_memory.json');
  expect(r.notes.join('\n')).toMatch(/no env_memory\.json: none of the 1 game has a win rate/);

  let out = '';
  const code = await main(['export', '--all', join(tmp.dir, 'out2'), '--data-dir', data], { out: (t) => (out += `${t}\n`), err: (t) => (out += `${t}\n`) });
  expect(code).toBe(0);
  expect(out).toMatch(/no env_memory\.json: none of the 1 game has a win rate/);

  // With a number to write, env_memory.json is there and nothing is said.
  db.prepare("UPDATE environments SET win_rate = 0.5 WHERE name = 'RiddleEnv'").run();
  const m = await exportEnvironmentsAsync(db, selectIds(db, {}), { format: 'spade', outDir: join(tmp.dir, 'out3') }, new RunStore(db));
  expect(m.files).toContain('env_memory.json');
  expect(m.notes).toEqual([]);
});
