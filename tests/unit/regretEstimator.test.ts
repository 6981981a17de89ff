/**
 * Which estimator made a regret: migration 19 from the schema before it (a library whose runs were
 * all measured with paired seeds), SPADE's estimator's counts and failure rule, a model run's
 * measurement by each, and a compare of two runs that never mixes them.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, openDatabase } from '../../core/memory/db';
import { migrations } from '../../core/memory/migrations';
import { RunService } from '../../core/runs/service';
import { measure, type RunEpisodeRow } from '../../core/runs/measure';
import { memoryCatalog } from '../../core/episodes/catalog';
import { spadeAggregate, spadeGamePath, spadeJobs, SPADE_ESTIMATOR_DEFAULTS } from '../../core/episodes/estimator';
import { summarize, type JobResult } from '../../core/episodes/regret';
import { spadeHintSeeds } from '../../core/episodes/spadeSeeds';
import { tempDir } from '../helpers/tmp';

const tmps: { cleanup(): void }[] = [];
afterEach(() => tmps.splice(0).forEach((t) => t.cleanup()));
const H = 'c'.repeat(64);

describe('migration 19: every stored regret names its estimator', () => {
  it('marks the runs of a library at the schema before it paired, and refuses an unknown estimator', () => {
    const t = tempDir();
    tmps.push(t);
    const path = join(t.dir, 'w.sqlite');
    const raw = new Database(path);
    // The schema this branch started from (main at 17), with a run and its numbers in it.
    migrate(raw, migrations.filter((m) => m.version <= 18));
    const now = '2026-01-01T00:00:00.000Z';
    raw.prepare(`INSERT INTO model_runs (id, model, endpoint, config, hint_source, seeds, seed_start, arms, max_turns, runtime, selection, hashes, status, started_at, updated_at) VALUES ('old', 'm', 'http://x', '{"endpoint":{},"sampling":{}}', 'library', 2, 0, '["hint","nohint"]', 8, 'pyodide', NULL, '["${H}"]', 'done', ?, ?)`).run(now, now);
    raw.prepare(`INSERT INTO model_run_episodes (run_id, env_hash, hint, seed, status, ret, ended_by, error, episode_id, recorded_at) VALUES ('old', ?, 1, 0, 'ok', 1, 'env', NULL, NULL, ?), ('old', ?, 0, 0, 'ok', 0, 'env', NULL, NULL, ?)`).run(H, now, H, now);
    raw.prepare(`INSERT INTO model_run_envs (run_id, env_hash, env_name, model, r_hint, r_no_hint, regret, win_rate, updated_at) VALUES ('old', ?, 'g', 'm', 1, 0, 1, 0, ?)`).run(H, now);
    raw.close();

    const db = openDatabase(path);
    expect(db.prepare('SELECT estimator FROM model_runs').all()).toEqual([{ estimator: 'paired' }]);
    expect(db.prepare('SELECT estimator, regret FROM model_run_envs').all()).toEqual([{ estimator: 'paired', regret: 1 }]);
    expect(db.prepare('SELECT unseeded FROM model_run_episodes').all()).toEqual([{ unseeded: 0 }, { unseeded: 0 }]);
    const runs = new RunService({ db, catalog: memoryCatalog(db), minShare: () => 1 });
    expect(runs.get('old').run.estimator).toBe('paired');
    expect(runs.measurements([H]).map((m) => m.estimator)).toEqual(['paired']);
    expect(() => db.prepare("UPDATE model_runs SET estimator = 'bogus'").run()).toThrow(/CHECK/);
    db.close();
  });
});

describe("SPADE's estimator", () => {
  it("plays SPADE's counts: 16 hinted seeded from the path, 8 unhinted unseeded; none hinted without a hint", () => {
    const jobs = spadeJobs(H, 'g.py', true, SPADE_ESTIMATOR_DEFAULTS);
    expect(jobs.filter((j) => j.hint).map((j) => j.seed)).toEqual(spadeHintSeeds('g.py', 16, 0));
    expect(jobs.filter((j) => !j.hint).map((j) => [j.seed, j.slot])).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((k) => [null, k]));
    expect(spadeJobs(H, 'g.py', false, SPADE_ESTIMATOR_DEFAULTS).every((j) => !j.hint)).toBe(true);
    expect(spadeGamePath({ fileStem: 'game_7', name: 'SevenEnv' }, H)).toBe('game_7.py');
    expect(spadeGamePath({ name: 'SevenEnv' }, H)).toBe('SevenEnv.py');
    expect(spadeGamePath(null, H)).toBe(`${H.slice(0, 12)}.py`);
  });

  it('counts a failed hinted play 0.0 and drops a failed unhinted one, where paired seeds drop both', () => {
    const r = (hint: boolean, seed: number | null, ret: number, failed = false, slot?: number): JobResult => ({ hash: H, hint, seed, ...(slot !== undefined ? { slot } : {}), episodeId: 1, ret, endedBy: failed ? 'error' : 'env', failed, error: failed ? 'x' : null });
    const results = [r(true, 11, 1), r(true, 12, 0, true), r(true, 13, 1), r(true, 14, 1), r(false, null, 1, false, 0), r(false, null, 0, true, 1), r(false, null, 0, false, 2)];
    const s = summarize(results, H, false, 'spade');
    expect([s.rHint, s.rNoHint, s.regret]).toEqual([0.75, 0.5, 0.25]);
    expect(s.withHint.returns).toEqual([1, 0, 1, 1]);
    expect(s.withoutHint.returns).toEqual([1, 0]);
    expect(spadeAggregate([{ hint: true, ret: 1, failed: false }], true)).toMatchObject({ rHint: 0, regret: 0 });
    // Every unhinted play failed: SPADE reads R(no hint) 0.0 (orchestrator.py:2046-2047).
    expect(spadeAggregate([{ hint: true, ret: 1, failed: false }, { hint: false, ret: 0, failed: true }], false)).toMatchObject({ rHint: 1, rNoHint: 0, regret: 1, droppedNoHint: 1 });
  });

  it("a model run measures by its estimator: SPADE's counts every hinted play, paired only the seeds both arms finished", () => {
    const row = (hint: boolean, seed: number, ok: boolean, ret: number, unseeded = false): RunEpisodeRow => ({ envHash: H, hint, seed, ...(unseeded ? { unseeded: true } : {}), status: ok ? 'ok' : 'failed', ret: ok ? ret : null, endedBy: ok ? 'env' : 'error', error: ok ? null : 'x', episodeId: null });
    const rows = [row(true, 5, true, 1), row(true, 6, false, 0), row(false, 0, true, 0, true), row(false, 1, true, 1, true)];
    const sp = measure(rows, { arms: ['hint', 'nohint'], requested: 2, minShare: 1, hintFailed: false, estimator: 'spade' });
    expect(sp).toMatchObject({ rHint: 0.5, rNoHint: 0.5, regret: 0, winRate: 0.5, okHint: 1, okNoHint: 2, failed: 1, seeds: [5, 6], notMeasured: null });
    const paired = measure(rows, { arms: ['hint', 'nohint'], requested: 2, minShare: 1, hintFailed: false, estimator: 'paired' });
    expect(paired.regret).toBeNull();
  });
});

describe('runs compare', () => {
  it('refuses two runs measured by different estimators, and compares two of the same', () => {
    const db = openDatabase(':memory:');
    const runs = new RunService({ db, catalog: memoryCatalog(db), minShare: () => 1 });
    const spec = (id: string, estimator: 'spade' | 'paired') => ({ id, model: 'm', endpoint: 'http://x', config: { endpoint: {}, sampling: { temperature: 1, topP: 1, topK: null, maxTokens: 1, thinking: null }, hintText: 'h' }, hintSource: 'given', seeds: 1, seedStart: 0, arms: ['hint', 'nohint'] as ('hint' | 'nohint')[], maxTurns: 1, runtime: 'pyodide', selection: null, hashes: [H], estimator });
    for (const [id, e] of [['a', 'spade'], ['b', 'paired'], ['c', 'spade']] as const) {
      runs.begin(spec(id, e));
      runs.end(id, 'done');
    }
    expect(() => runs.compare('a', 'b')).toThrow(/SPADE's regret.*paired-seed regret \(workbench\).*not comparable/);
    expect(runs.compare('a', 'c').rows).toHaveLength(1);
    db.close();
  });
});
