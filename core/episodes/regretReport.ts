import type { RegretReport } from '../api/calls/runs';
import type { RunView } from '../api/calls/runs';
import type { SweepRow } from '../sweeps/sweepStore';
import type { JobResult } from './regret';
import { ESTIMATOR_LABEL } from './estimator';
import type { ArmSummary } from './regret';
import type { RegretRemoteOptions } from './regretRemote';
import type { RegretEstimator, SpadeEstimatorOptions } from './estimator';
import type { DispatchSettings, SweepTarget } from '../sweeps/targets';

/** What a regret sweep keeps of how it was started, so that a resume or a cancel reaches the same place. */
export interface StoredRegretOptions {
  /** `estimator` absent: a sweep stored before estimators had names, paired seeds. */
  regret: RegretRemoteOptions & { seeds: number; seedStart: number; estimator?: RegretEstimator; spade?: SpadeEstimatorOptions };
  dispatch: DispatchSettings;
  target: SweepTarget;
  /** The model-run record the sweep's episodes are kept in. */
  runId: string;
  /**
   * The endpoint as the caller's local run would keep it in the run record (a design round's game:
   * the app's endpoint, its key by the secret's name), so a run played on a cluster keeps what a
   * local one keeps, plus where it ran. Absent: the sweep's model as the command line gave it.
   */
  recordEndpoint?: Record<string, unknown>;
}

export interface RegretEnvSummary {
  hash: string;
  name: string | null;
  hintFailed: boolean;
  withHint: ArmSummary;
  withoutHint: ArmSummary;
  regret: number;
  rHint: number;
  rNoHint: number;
  estimator: RegretEstimator;
}

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
    ...measuredArms(e),
    hint_failed: e.hintFailed,
    returns_hint: e.withHint.returns,
    returns_no_hint: e.withoutHint.returns,
    win_rate_hint: e.withHint.returns.length ? e.withHint.solveRate : null,
    win_rate_no_hint: e.withoutHint.returns.length ? e.withoutHint.solveRate : null,
    win_rate: measured.get(e.hash)?.winRate ?? null,
    failed: measured.get(e.hash)?.failed ?? 0,
    not_measured: measured.get(e.hash)?.notMeasured ?? null,
  }));
  // The means cover the same environments, those whose regret was measured (both arms returned),
  // so mean regret is mean R(hint) - mean R(no hint); an environment without a hinted arm (no hint,
  // or every hinted episode failed) is counted apart, never as 0 (SPADE leaves a game without
  // r_hint out of env/avg_r_hint too: spade/core/utils/env_rewards.py:297-298).
  const withRegret = envs.filter((e): e is typeof e & { regret: number; r_hint: number; r_no_hint: number } => e.regret !== null);
  const avg = (f: (e: (typeof withRegret)[number]) => number) => (withRegret.length ? withRegret.reduce((a, e) => a + f(e), 0) / withRegret.length : null);
  return {
    sweep: sweep.id,
    run_id: out.runId,
    on: sweep.target,
    policy: stored.regret.model ? 'model' : stored.regret.policy.kind,
    model: stored.regret.model?.model ?? null,
    budget: stored.regret.budget,
    estimator: stored.regret.estimator ?? 'paired',
    status: view.run.status,
    failed: view.failedText,
    summary: { envs: envs.length, measured: withRegret.length, no_hint: envs.filter((e) => e.hint_failed).length, avg_regret: avg((e) => e.regret), avg_r_hint: avg((e) => e.r_hint), avg_r_no_hint: avg((e) => e.r_no_hint) },
    envs,
  };
}

/**
 * An environment's numbers as the report gives them: regret only where both arms returned. SPADE's
 * trainer scores a failed hint generation as regret 0 (summarize keeps that arithmetic, spade.ts
 * spadeRegret); a measurement without a hinted arm has measured no regret, and says so (null).
 */
export function measuredArms(e: Pick<RegretEnvSummary, 'hintFailed' | 'withHint' | 'withoutHint' | 'rHint' | 'rNoHint' | 'regret'>): { r_hint: number | null; r_no_hint: number | null; regret: number | null } {
  const hinted = !e.hintFailed && e.withHint.returns.length > 0;
  const plain = e.withoutHint.returns.length > 0;
  return { r_hint: hinted ? e.rHint : null, r_no_hint: plain ? e.rNoHint : null, regret: hinted && plain ? e.regret : null };
}

/** Why an environment of the report has no regret. */
export function notMeasuredWhy(e: Pick<RegretReport['envs'][number], 'hint_failed' | 'returns_hint' | 'returns_no_hint'>): string {
  if (e.hint_failed) return 'no hint: regret needs the hinted arm';
  if (!e.returns_hint.length && !e.returns_no_hint.length) return 'no episode returned';
  return !e.returns_hint.length ? 'no hinted episode returned' : 'no unhinted episode returned';
}

/** The episodes as `regret --json` lists them. */
export function reportEpisodes(results: readonly JobResult[]) {
  // seed null: reset with no seed (SPADE's unhinted plays), `slot` its place among them.
  return results.map((r) => ({ hash: r.hash, seed: r.seed, ...(r.seed === null ? { slot: r.slot ?? 0 } : {}), hint: r.hint, return: r.failed ? null : r.ret, endedBy: r.endedBy, failed: r.failed, error: r.error, episodeId: r.episodeId }));
}

/** The report as `regret` prints it without --json. */
export function reportLines(r: RegretReport, model: string): string[] {
  return [
    ...r.envs.map((e) => {
      const nums = e.regret === null ? `R(no hint) ${e.r_no_hint === null ? '-' : e.r_no_hint.toFixed(3)}  regret not measured (${notMeasuredWhy(e)})` : `R(hint) ${e.r_hint!.toFixed(3)}  R(no hint) ${e.r_no_hint!.toFixed(3)}  regret ${e.regret.toFixed(3)}`;
      return `${e.env.padEnd(28)} ${e.hash.slice(0, 8)}  ${nums}${e.failed ? `  (${e.failed} failed)` : ''}`;
    }),
    `mean over ${r.summary.measured} of ${r.summary.envs} environments with regret measured: regret ${fmt3(r.summary.avg_regret)}  R(hint) ${fmt3(r.summary.avg_r_hint)}  R(no hint) ${fmt3(r.summary.avg_r_no_hint)}`,
    `regret sweep ${r.sweep} on ${r.on}: run ${r.run_id} (${model}) ${r.status}${r.failed ? `, ${r.failed}` : ''}; ${ESTIMATOR_LABEL[r.estimator]}`,
  ];
}

const fmt3 = (x: number | null) => (x === null ? '-' : x.toFixed(3));
