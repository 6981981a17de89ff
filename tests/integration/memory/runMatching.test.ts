import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../../core/memory/db';
import { importPaths } from '../../../core/memory/importer';
import { attachRunReturns } from '../../../core/memory/runStats';
import { JobStore } from '../../../core/jobs/jobStore';
import type { JobRecord } from '../../../core/jobs/types';
import { tempDir } from '../../helpers/tmp';

// SPADE names games game_{rollout}_{index}_{skill} in every run, so two runs hold files of the same
// name with different code. A run's per-game numbers (env_memory.json, [REGRET] lines) must land on
// that run's own game, never on another run's game of the same name.
const STEM = 'game_00000_000_pattern_recognition';
const game = (tag: string) => `"""SPADE self-play generated game"""\nclass Run${tag}Env:\n    def reset(self, seed=None):\n        return "run ${tag}", {}\n    def step(self, action):\n        return "done", 1.0, True, False, {}\n`;

let tmp: ReturnType<typeof tempDir>;
let db: Db;
beforeEach(() => {
  tmp = tempDir('spade-run-matching-');
  db = openDatabase(join(tmp.dir, 'w.sqlite'));
});
afterEach(() => {
  db.close();
  tmp.cleanup();
});

/** A run's output folder in SPADE's layout; env_memory.json names games by the path SPADE wrote (on its own machine). */
function run(tag: string, records: { actor_win_rate: number; regret: number }[]): string {
  const out = join(tmp.dir, `run${tag}`);
  mkdirSync(join(out, 'spade_games'), { recursive: true });
  mkdirSync(join(out, 'spade_games_cache'), { recursive: true });
  records.forEach((_, i) => writeFileSync(join(out, 'spade_games', `game_00000_00${i}_pattern_recognition.py`), game(`${tag}${i}`)));
  const memory = records.map((r, i) => ({
    game_file: `/scratch/spade/spade_games/game_00000_00${i}_pattern_recognition.py`,
    skill: 'Pattern Recognition',
    code_snippet: '',
    actor_win_rate: r.actor_win_rate,
    regret: r.regret,
    rollout_id: 0,
    metadata: {},
  }));
  writeFileSync(join(out, 'spade_games_cache', 'env_memory.json'), JSON.stringify(memory));
  return out;
}

const stats = (cls: string) =>
  db.prepare('SELECT win_rate AS winRate, regret, r_hint AS rHint, r_no_hint AS rNoHint FROM environments WHERE name = ?').get(cls) as {
    winRate: number | null;
    regret: number | null;
    rHint: number | null;
    rNoHint: number | null;
  };

describe("a run's per-game numbers, matched within that run", () => {
  it('attaches env_memory.json records to the games of its own output folder, not to another run of the same name', async () => {
    const b = run('B', [{ actor_win_rate: 0.25, regret: 0.5 }]);
    const a = run('A', [{ actor_win_rate: 0.75, regret: 0.125 }]);
    await importPaths(db, [join(b, 'spade_games')]);
    // Another run's game of the same file name arrives later (the newest of that name).
    await importPaths(db, [join(a, 'spade_games')]);
    const s = await importPaths(db, [join(b, 'spade_games_cache', 'env_memory.json')]);
    expect(s.statsAttached).toBe(1);
    expect(stats('RunB0Env')).toMatchObject({ winRate: 0.25, regret: 0.5 });
    expect(stats('RunA0Env')).toMatchObject({ winRate: null, regret: null });
  });

  it('says "not measured" for SPADE\'s placeholder regret (all 0.0, or a run that never computes it), keeps a measured 0', async () => {
    const c = run('C', [{ actor_win_rate: 0.5, regret: 0 }, { actor_win_rate: 0.25, regret: 0 }]);
    await importPaths(db, [c]);
    expect(stats('RunC0Env')).toMatchObject({ winRate: 0.5, regret: null });
    expect(stats('RunC1Env')).toMatchObject({ winRate: 0.25, regret: null });
    // One record with regret 0.0: SPADE's own number unless the job says its variant never measures it.
    const d = run('D', [{ actor_win_rate: 0.5, regret: 0 }]);
    await importPaths(db, [d]);
    expect(stats('RunD0Env')).toMatchObject({ winRate: 0.5, regret: 0 });
    const e = run('E', [{ actor_win_rate: 0.5, regret: 0 }]);
    await importPaths(db, [e], { jobId: 'lp-job', regretPlaceholder: 'the learning_potential variant' });
    expect(stats('RunE0Env')).toMatchObject({ winRate: 0.5, regret: null });
  });

  it("attaches a job's [REGRET] returns to the game that job brought back, and to no other game of that name", async () => {
    const store = new JobStore(db);
    const now = new Date().toISOString();
    const job: JobRecord = {
      id: 'jregret', name: 'regret run', backend: 'local', host: null, recipe: null, externalId: null, state: 'running', detail: '', exitCode: null,
      remoteLog: null, logOffset: 0, localLogSize: 0, metricsOffset: 0, createdAt: now, startedAt: now, finishedAt: null, updatedAt: now,
      spec: { name: 'regret run', backend: 'local', command: ['true'], workdir: tmp.dir, env: {}, secretEnv: [], outputs: {}, ship: [], importEnvironments: true },
    };
    store.insert(job);
    const other = run('O', [{ actor_win_rate: 0.5, regret: 0.5 }]);
    await importPaths(db, [join(other, 'spade_games')], { jobId: 'someone-else' });
    // The log's line arrives before the game comes back: kept with the job, attached on import.
    store.commitLog(job.id, 0, 0, [], [{ game: `${STEM}.py`, rHint: 0.875, rNoHint: 0.25, regret: 0.625 }]);
    const mine = run('M', [{ actor_win_rate: 0.5, regret: 0.625 }]);
    const s = await importPaths(db, [join(mine, 'spade_games')], { jobId: job.id });
    expect(s.statsAttached).toBe(1);
    expect(stats('RunM0Env')).toMatchObject({ rHint: 0.875, rNoHint: 0.25, regret: 0.625 });
    expect(stats('RunO0Env')).toMatchObject({ rHint: null, rNoHint: null, regret: null });
    // A later line for the same game (the log goes on) attaches when the log is read.
    store.commitLog(job.id, 0, 0, [], [{ game: `${STEM}.py`, rHint: 1, rNoHint: 0.5, regret: 0.5 }]);
    expect(attachRunReturns(db, job.id)).toBe(1);
    expect(stats('RunM0Env')).toMatchObject({ rHint: 1, rNoHint: 0.5, regret: 0.5 });
    expect(attachRunReturns(db, job.id)).toBe(0);
  });
});
