import type { RegretReport } from '../api/calls/runs';
import type { RunView } from '../api/calls/runs';
import type { SweepRow } from '../audit/dispatch/sweepStore';
import type { JobResult } from './regret';
import type { RegretEnvSummary, StoredRegretOptions } from './regretSweep';

/**
 * A regret sweep's report, the one thing both `regret --json` prints and the app shows: per
 * environment SPADE's arithmetic over the seeds both arms finished (regret.ts summarize, as a local
 * run computes it) beside the run record's measurement, and the means over the pool.
 */
export function regretReport(sweep: SweepRow, out: { runId: string; envs: RegretEnvSummary[] }, view: RunView): RegretReport {
  const stored = sweep.options as unknown as StoredRegretOptions;
  const measured = new Map(view.envs.map((e) => [e.envHash, e]));
  const envs = out.envs.map((e) => ({
    env: e.name ?? e.hash.slice(0, 12),
    hash: e.hash,
    r_hint: e.rHint,
    r_no_hint: e.rNoHint,
    regret: e.regret,
    hint_failed: e.hintFailed,
    returns_hint: e.withHint.returns,
    returns_no_hint: e.withoutHint.returns,
    win_rate_hint: e.withHint.returns.length ? e.withHint.solveRate : null,
    win_rate_no_hint: e.withoutHint.returns.length ? e.withoutHint.solveRate : null,
    win_rate: measured.get(e.hash)?.winRate ?? null,
    failed: measured.get(e.hash)?.failed ?? 0,
    not_measured: measured.get(e.hash)?.notMeasured ?? null,
  }));
  // An environment none of whose episodes returned (all failed) has no number to average.
  const played = envs.filter((e) => e.returns_no_hint.length > 0);
  const avg = (f: (e: (typeof envs)[number]) => number) => (played.length ? played.reduce((a, e) => a + f(e), 0) / played.length : null);
  return {
    sweep: sweep.id,
    run_id: out.runId,
    on: sweep.target,
    policy: stored.regret.model ? 'model' : stored.regret.policy.kind,
    model: stored.regret.model?.model ?? null,
    budget: stored.regret.budget,
    status: view.run.status,
    failed: view.failedText,
    summary: { envs: envs.length, avg_regret: avg((e) => e.regret), avg_r_hint: avg((e) => e.r_hint), avg_r_no_hint: avg((e) => e.r_no_hint) },
    envs,
  };
}

/** The episodes as `regret --json` lists them. */
export function reportEpisodes(results: readonly JobResult[]) {
  return results.map((r) => ({ hash: r.hash, seed: r.seed, hint: r.hint, return: r.failed ? null : r.ret, endedBy: r.endedBy, failed: r.failed, error: r.error, episodeId: r.episodeId }));
}

/** The report as `regret` prints it without --json. */
export function reportLines(r: RegretReport, model: string): string[] {
  return [
    ...r.envs.map((e) => `${e.env.padEnd(28)} R(hint) ${e.r_hint.toFixed(3)}  R(no hint) ${e.r_no_hint.toFixed(3)}  regret ${e.regret.toFixed(3)}${e.failed ? `  (${e.failed} failed)` : ''}`),
    `regret sweep ${r.sweep} on ${r.on}: run ${r.run_id} (${model}) ${r.status}${r.failed ? `, ${r.failed}` : ''}`,
  ];
}
