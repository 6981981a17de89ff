import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../../core/memory/db';
import { EpisodeStore, type StepRecord } from '../../../core/episodes/episodeStore';
import { regretReport, reportLines } from '../../../core/episodes/regretReport';
import { summarize, type JobResult } from '../../../core/episodes/regret';
import type { RegretEnvSummary } from '../../../core/runs/regretSweep';
import type { SweepRow } from '../../../core/sweeps/sweepStore';
import type { RunView } from '../../../core/api/calls/runs';
import { measure, type RunEpisodeRow } from '../../../core/runs/measure';
import { tempDir } from '../../helpers/tmp';

// Issue 46, "numbers that lie": a regret sweep over environments without a hint showed regret 0,
// drew them at 0 and averaged R(hint) with the missing arm as 0 (mean regret 0, mean R(hint) 0.5,
// mean R(no hint) 1); and the episode list said "return 0" for an episode won at step 1 and then
// reset, with nothing saying that the reset started a new return.

const job = (hash: string, hint: boolean, seed: number, ret: number): JobResult => ({ hash, hint, seed, ret, episodeId: seed * 2 + (hint ? 1 : 0), endedBy: 'env', failed: false, error: null });
const HINTED = 'a'.repeat(64);
const NO_HINT = 'b'.repeat(64);

function env(hash: string, name: string, results: JobResult[], hintFailed: boolean): RegretEnvSummary {
  return { hash, name, hintFailed, ...summarize(results, hash, hintFailed, 'paired') };
}

function report(envs: RegretEnvSummary[]) {
  const sweep = { id: 'sw1', target: 'local', options: { regret: { budget: 30, policy: { kind: 'solution' } } } } as unknown as SweepRow;
  const view = { run: { status: 'done' }, failedText: null, envs: [] } as unknown as RunView;
  return regretReport(sweep, { runId: 'run-1', envs }, view);
}

describe('regret without a hinted arm is not measured', () => {
  // One game won with and without the hint (regret 0), one game without a hint won unhinted.
  const results = [job(HINTED, true, 0, 1), job(HINTED, false, 0, 1), job(NO_HINT, false, 0, 1)];
  const envs = [env(HINTED, 'HintedEnv', results, false), env(NO_HINT, 'NoHintEnv', results, true)];

  it('gives the hint-less game no regret and no R(hint), and means over the same measured games', () => {
    const r = report(envs);
    const noHint = r.envs.find((e) => e.env === 'NoHintEnv')!;
    expect(noHint).toMatchObject({ hint_failed: true, regret: null, r_hint: null, r_no_hint: 1 });
    expect(r.envs.find((e) => e.env === 'HintedEnv')).toMatchObject({ regret: 0, r_hint: 1, r_no_hint: 1 });
    // The means cover the one game with regret measured, and agree with each other.
    expect(r.summary).toEqual({ envs: 2, measured: 1, no_hint: 1, avg_regret: 0, avg_r_hint: 1, avg_r_no_hint: 1 });
    expect(r.summary.avg_regret).toBeCloseTo(r.summary.avg_r_hint! - r.summary.avg_r_no_hint!, 12);
    // What `regret` prints without --json says so in words.
    const lines = reportLines(r, 'policy:solution');
    expect(lines.find((l) => l.startsWith('NoHintEnv'))).toMatch(/regret not measured \(no hint/);
    expect(lines.find((l) => l.startsWith('mean over'))).toBe('mean over 1 of 2 environments with regret measured: regret 0.000  R(hint) 1.000  R(no hint) 1.000');
  });

  it('counts a game whose hinted episodes all failed as not measured, never as 0', () => {
    const failedHint = [{ ...job(HINTED, true, 0, 0), failed: true }, job(HINTED, false, 0, 0.5)];
    const r = report([env(HINTED, 'HintedEnv', failedHint, false)]);
    expect(r.envs[0]).toMatchObject({ regret: null, r_hint: null, r_no_hint: 0.5 });
    expect(r.summary).toMatchObject({ measured: 0, avg_regret: null, avg_r_hint: null, avg_r_no_hint: null });
  });

  it('a model run measures no regret for a version without a hint, and keeps its win rate', () => {
    const rows: RunEpisodeRow[] = [0, 1].map((seed) => ({ envHash: NO_HINT, hint: false, seed, status: 'ok', ret: seed === 0 ? 1 : 0, endedBy: 'env', error: null, episodeId: seed }));
    const m = measure(rows, { arms: ['hint', 'nohint'], requested: 2, minShare: 1, hintFailed: true, estimator: 'paired' });
    expect(m).toMatchObject({ regret: null, rHint: null, rNoHint: 0.5, winRate: 0.5, hintFailed: true });
  });
});

describe('an episode reset after a win says what the earlier reset returned', () => {
  const reset = (idx: number): StepRecord => ({ idx, kind: 'reset', action: null, rawAction: null, seed: 0, observation: 'start', reward: null, terminated: false, truncated: false, info: {}, error: null, state: null, types: null });
  const step = (idx: number, reward: number, terminated: boolean): StepRecord => ({
    idx,
    kind: 'step',
    action: '\\boxed{1}',
    rawAction: null,
    seed: null,
    observation: 'x',
    reward,
    terminated,
    truncated: false,
    info: {},
    error: null,
    state: null,
    types: null,
    spade: { observation: 'x', reward, terminated, truncated: false, info: {} },
  });

  it('keeps the earlier segments returns beside the last one, and none for a single reset', () => {
    const tmp = tempDir();
    const db = openDatabase(`${tmp.dir}/w.sqlite`);
    try {
      const store = new EpisodeStore(db);
      const id = store.create({ envHash: 'c'.repeat(64), envName: 'WinEnv', className: 'WinEnv', seed: 0, hintEnabled: false, hintText: null, maxTurns: 30, runtime: 'cpython', origin: 'played', policy: { kind: 'interactive' } });
      store.appendSteps(id, [reset(0), step(1, 1, true)]);
      expect(store.meta(id)).toMatchObject({ totalReturn: 1 });
      expect(store.meta(id)!.meta.earlierReturns).toBeUndefined();
      // Reset again: the episode's return is the new segment's (0 so far), the win is kept as said.
      store.appendSteps(id, [reset(2)]);
      expect(store.meta(id)!.totalReturn).toBe(0);
      expect(store.meta(id)!.meta.earlierReturns).toEqual([1]);
      store.appendSteps(id, [step(3, 0.5, false), reset(4), step(5, -1, true)]);
      expect(store.meta(id)!.totalReturn).toBe(-1);
      expect(store.meta(id)!.meta.earlierReturns).toEqual([1, 0]);
      // Other meta survives the bookkeeping, and the list carries it.
      store.setMeta(id, { ...store.meta(id)!.meta, note: 'kept' });
      store.appendSteps(id, [step(6, 0, false)]);
      expect(store.list({ limit: 10, offset: 0 }).rows[0]!.meta).toMatchObject({ note: 'kept', earlierReturns: [1, 0] });
    } finally {
      db.close();
      tmp.cleanup();
    }
  });
});
