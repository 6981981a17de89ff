import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { makeDamagedLibrary } from '../../helpers/damage';
import { tempDir } from '../../helpers/tmp';
import { gameSource, write } from './fixtures';

// These run the real CLI as a separate process (bin/spade-workbench.mjs on the built dist/node/cli.js).
const root = process.cwd();
const bin = join(root, 'bin', 'spade-workbench.mjs');
let tmp: ReturnType<typeof tempDir>;

beforeAll(() => {
  execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--node'], { stdio: 'pipe' });
  tmp = tempDir('spade-mem-cli-');
  chmodSync(tmp.dir, 0o755);
});
afterAll(() => tmp.cleanup());

function cli(args: string[], opts: { uid?: number; gid?: number } = {}) {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', ...opts });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('spade-workbench import/export/search/stats', () => {
  it('reads a damaged library with a warning and refuses to write to it', async () => {
    const data = join(tmp.dir, 'damaged');
    await makeDamagedLibrary(data);
    const stats = cli(['stats', '--data-dir', data]);
    expect(stats.code).toBe(0);
    expect(stats.err).toMatch(/failed its quick integrity check .*reading only/);
    const src = join(tmp.dir, 'src-damaged');
    write(src, 'game_00001_000_optimization.py', gameSource(77, 'LateArrivalEnv'));
    const imp = cli(['import', src, '--data-dir', data]);
    expect(imp.code).not.toBe(0);
    expect(imp.err).toMatch(/readonly|read-only/i);
  });

  it('stays inside the chosen folder unless --follow-links asks to follow a symlink out of it', () => {
    const outside = join(tmp.dir, 'outside-links');
    write(outside, 'game_00001_000_optimization.py', gameSource(78, 'FarAwayEnv'));
    const src = join(tmp.dir, 'src-links');
    write(src, 'game_00001_001_optimization.py', gameSource(79, 'NearbyEnv'));
    symlinkSync(outside, join(src, 'elsewhere'));
    const data = join(tmp.dir, 'data-links');
    let r = cli(['import', src, '--data-dir', data]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/Imported 1 new environment/);
    expect(r.out).toMatch(/skipped .*elsewhere: outside the chosen folders, not followed/);
    r = cli(['import', src, '--data-dir', data, '--follow-links']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/Imported 1 new environment/);
    expect(r.out).not.toMatch(/not followed/);
    expect(cli(['search', 'FarAway', '--data-dir', data]).out).toMatch(/1 match/);
  });

  it('imports, searches, reports stats and exports, human-readable and --json', () => {
    const src = join(tmp.dir, 'src');
    const data = join(tmp.dir, 'data1');
    write(src, 'game_00001_000_optimization.py', gameSource(1, 'ClockworkEnv'));
    write(src, 'game_00001_000_optimization_hint.txt', 'Wind it backwards.');
    write(src, 'junk.bin', Buffer.from([0, 1, 2]));
    let r = cli(['import', src, '--data-dir', data]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/Imported 1 new environment/);
    expect(r.out).toMatch(/skipped .*junk\.bin: not an environment file/);
    r = cli(['import', src, '--data-dir', data, '--json']);
    const summary = JSON.parse(r.out) as { imported: number; unchanged: number };
    expect(summary).toMatchObject({ imported: 0, unchanged: 1 });
    r = cli(['search', 'clockwork', '--data-dir', data]);
    expect(r.out).toMatch(/1 match/);
    expect(r.out).toMatch(/ClockworkEnv\s+Optimization/);
    r = cli(['search', 'backwards', '--data-dir', data, '--json']);
    expect((JSON.parse(r.out) as { total: number }).total).toBe(1);
    r = cli(['stats', '--data-dir', data]);
    expect(r.out).toMatch(/environments 1 /);
    expect((JSON.parse(cli(['stats', '--data-dir', data, '--json']).out) as { environments: number }).environments).toBe(1);
    r = cli(['export', '--seeds', '--format', 'spade', join(tmp.dir, 'none'), '--data-dir', data]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/Nothing matches/);
    r = cli(['export', '--all', '--format', 'jsonl', join(tmp.dir, 'out'), '--data-dir', data]);
    expect(r.code).toBe(0);
    expect(existsSync(join(tmp.dir, 'out', 'environments.jsonl'))).toBe(true);
    r = cli(['export', '--format', 'csv', '--all', join(tmp.dir, 'out2')]);
    expect(r.code).toBe(2);
  });

  // Root reads any file whatever its mode, so the unreadable file is tried by the unprivileged user.
  it.runIf(process.getuid?.() === 0)('reports an unreadable file and goes on (import run as nobody)', () => {
    const src = join(tmp.dir, 'locked');
    const data = join(tmp.dir, 'data-nobody');
    write(src, 'game_00001_000_optimization.py', gameSource(5, 'OpenEnv'));
    const locked = write(src, 'game_00001_001_optimization.py', gameSource(6, 'LockedEnv'));
    chmodSync(src, 0o755);
    chmodSync(locked, 0o000);
    mkdirSync(data);
    chownSync(data, 65534, 65534);
    const r = cli(['import', src, '--data-dir', data, '--json'], { uid: 65534, gid: 65534 });
    expect(r.err).toBe('');
    const s = JSON.parse(r.out) as { imported: number; skipped: { path: string; reason: string }[] };
    expect(s.imported).toBe(1);
    expect(s.skipped).toEqual([{ path: locked, reason: 'permission denied (unreadable)' }]);
  });

  it('survives SIGKILL mid-import: integrity_check passes, committed batches stay, a re-run finishes without duplicates', async () => {
    const src = join(tmp.dir, 'many');
    const total = 8000;
    mkdirSync(src);
    for (let i = 0; i < total; i++) writeFileSync(join(src, `game_00004_${String(i).padStart(4, '0')}_optimization.py`), gameSource(1000 + i));
    const data = join(tmp.dir, 'data-kill');
    const dbPath = join(data, 'workbench.sqlite');
    const child = spawn(process.execPath, [bin, 'import', src, '--data-dir', data, '--quiet'], { stdio: 'ignore' });
    const count = (): number => {
      if (!existsSync(dbPath)) return 0;
      const d = new Database(dbPath, { readonly: true, fileMustExist: true });
      try {
        return (d.prepare("SELECT count(*) n FROM sqlite_master WHERE name = 'environments'").get() as { n: number }).n
          ? (d.prepare('SELECT count(*) n FROM environments').get() as { n: number }).n
          : 0;
      } catch {
        return 0;
      } finally {
        d.close();
      }
    };
    const exited = new Promise<void>((r) => child.on('exit', () => r()));
    for (let i = 0; i < 2000 && count() === 0; i++) await new Promise((r) => setTimeout(r, 10));
    child.kill('SIGKILL');
    await exited;
    const d = new Database(dbPath);
    expect(d.pragma('integrity_check', { simple: true })).toBe('ok');
    const committed = (d.prepare('SELECT count(*) n FROM environments').get() as { n: number }).n;
    const versions = (d.prepare('SELECT count(*) n FROM versions').get() as { n: number }).n;
    d.close();
    expect(committed).toBeGreaterThan(0);
    expect(committed, 'the import finished before the kill; the test needs more files').toBeLessThan(total);
    expect(committed % 250).toBe(0);
    expect(versions).toBe(committed);
    const r = cli(['import', src, '--data-dir', data, '--json']);
    expect(r.code).toBe(0);
    const s = JSON.parse(r.out) as { imported: number; unchanged: number };
    expect(s.imported).toBe(total - committed);
    expect(s.unchanged).toBe(committed);
    const d2 = new Database(dbPath, { readonly: true });
    expect(d2.pragma('integrity_check', { simple: true })).toBe('ok');
    expect((d2.prepare('SELECT count(*) n FROM environments').get() as { n: number }).n).toBe(total);
    expect((d2.prepare('SELECT count(DISTINCT hash) n FROM versions').get() as { n: number }).n).toBe(total);
    d2.close();
  });
});
