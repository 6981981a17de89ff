import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../../core/memory/db';
import { importPaths } from '../../../core/memory/importer';
import { search } from '../../../core/memory/repository';
import { importsOfJob } from '../../../core/memory/importLogStore';
import { tempDir } from '../../helpers/tmp';

// The bundled example run (resources/jobs/example-run), run for real with python3 over the seed
// pack; its output comes back the way a finished job's does. Its env_memory.json names the games it
// wrote (game_00001_000_...), which are seed-pack games the library already holds under their
// seed-pack names: every record must still find its environment.
let tmp: ReturnType<typeof tempDir>;
let db: Db;
beforeEach(() => {
  tmp = tempDir('spade-run-results-');
  db = openDatabase(join(tmp.dir, 'w.sqlite'));
});
afterEach(() => {
  db.close();
  tmp.cleanup();
});

describe('run results coming back', () => {
  it("attaches all of the example run's env_memory.json records to the library's environments", async () => {
    const seedPack = join(process.cwd(), 'resources', 'seed-pack');
    expect((await importPaths(db, [seedPack])).imported).toBe(21);
    const out = join(tmp.dir, 'run');
    execFileSync('python3', [join(process.cwd(), 'resources', 'jobs', 'example-run', 'spade_example_run.py'), '--output', out], { stdio: 'pipe', timeout: 120_000 });
    const s = await importPaths(db, [out], { jobId: 'example-job' });
    const notFound = s.skipped.filter((k) => /not in the library/.test(k.reason));
    expect(notFound).toEqual([]);
    expect(s.statsAttached).toBeGreaterThanOrEqual(12);
    const withStats = search(db, { filters: { regret: { min: -10, max: 10 } }, limit: 100 }).rows;
    expect(withStats.length).toBeGreaterThan(0);
    expect(withStats.every((r) => r.winRate !== null)).toBe(true);
    // The job view's line: what the job's results brought back.
    const back = importsOfJob(db, 'example-job');
    expect(back.imports).toBe(1);
    expect(back.statsAttached).toBe(s.statsAttached);
    expect(back.recordsUnmatched).toBe(0);
    expect(importsOfJob(db, 'another-job').imports).toBe(0);
  });
});

describe('load status at import', () => {
  it('flags a game with a syntax error instead of importing it silently with a skill and step from its name', async () => {
    const dir = join(tmp.dir, 'games');
    const good = 'class GoodEnv:\n    def reset(self, seed=None):\n        return "hi", {}\n    def step(self, a):\n        return "x", 0.0, True, False, {}\n';
    const bad = 'class BrokenEnv:\n    def reset(self, seed=None:\n        return "hi", {}\n';
    const { mkdirSync, writeFileSync } = await import('node:fs');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'game_00005_000_logical_deduction.py'), bad);
    writeFileSync(join(dir, 'game_00005_001_logical_deduction.py'), good);
    const s = await importPaths(db, [dir]);
    expect(s.imported).toBe(2);
    const flagged = s.flagged.filter((f) => f.flag === 'syntax_error');
    expect(flagged).toHaveLength(1);
    expect(flagged[0]!.path).toContain('game_00005_000_logical_deduction.py');
    expect(flagged[0]!.detail).toMatch(/^line 2: SyntaxError/);
    expect(flagged[0]!.detail).toContain('skill Logical Deduction, step 5 come from the file name only');
    const rows = search(db, { filters: { flagged: true } }).rows;
    expect(rows.map((r) => r.name)).toEqual(['BrokenEnv']);
    expect(rows[0]!.flags).toContain('syntax_error');
    // Importing it again is not a new finding about a new file: the stored flag stays, nothing is added.
    const again = await importPaths(db, [dir]);
    expect(again.flagged).toEqual([]);
    expect(again.unchanged).toBe(2);
  });
});

describe('import messages', () => {
  it('says a typed path does not exist, and keeps "broken link" for links', async () => {
    const { symlinkSync } = await import('node:fs');
    symlinkSync(join(tmp.dir, 'nowhere'), join(tmp.dir, 'dangling'));
    const s = await importPaths(db, [join(tmp.dir, 'never-existed'), join(tmp.dir, 'dangling')]);
    expect(s.skipped).toEqual([
      { path: join(tmp.dir, 'never-existed'), reason: 'no such file or folder' },
      { path: join(tmp.dir, 'dangling'), reason: 'missing (broken link or removed during import)' },
    ]);
  });
});
