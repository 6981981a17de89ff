/**
 * A design round's plays on a cluster: an accepted game's episodes (N seeds, with and without the
 * hint) as a regret sweep of their own on the round's target, through the machinery of
 * `regret --pool --on` (core/episodes/regretSweep.ts): the node plays and sends back every harness
 * call and model request with its reply, and this workbench plays them back through its own agent,
 * so returns, endedBy and the recorded episodes come from the code a local play uses, and an episode
 * the node played another way is a failed episode, never a number. A cancelled round stops the
 * sweep's tasks on the engine (driveSweep stops what it submitted).
 */
import { createHash } from 'node:crypto';
import type { Db } from '../memory/db';
import type { EpisodeStore } from '../episodes/episodeStore';
import type { RunService } from '../runs/service';
import type { NewRun } from '../runs/runStore';
import type { RuntimePort } from '../episodes/session';
import type { JobResult } from '../episodes/regret';
import { summarize } from '../episodes/regret';
import { regretSweeps, type SweepModel } from '../episodes/regretRemote';
import { driveRegretSweep, episodeKey, type StoredRegretOptions } from '../runs/regretSweep';
import { createSweep, sweepIdent, type SweepItem } from '../sweeps/sweepStore';
import { targetLabel, type DispatchSettings, type SweepTarget } from '../sweeps/targets';
import type { PlayOutcome } from './attempt';
import type { ModelRun } from '../api/calls/models';
import { jobKey } from '../episodes/regret';
import { spadeGamePath, spadeJobs, spadeOptions, type RegretEstimator, type SpadeEstimatorOptions } from '../episodes/estimator';

/** The run record of game idx of a round: one per played game, named after the round, wherever it played. */
export const gameRunId = (roundId: string, idx: number): string => `${roundId}-g${idx + 1}`;

/** What a game's run record is called in the Runs page's selection column. */
export const roundSelection = (seq: number | null): string => `design round ${seq ?? '?'}`;

/** The agent's endpoint as a node reaches it, or why it cannot (checked before a round stores anything). */
export function clusterAgentProblem(agent: { baseUrl: string; via?: unknown }): string | null {
  if (!/^https?:\/\//.test(agent.baseUrl)) return 'the embedded model plays only on this machine: give the agent as an http(s) endpoint the nodes can reach, or do not play';
  if (agent.via) return "an endpoint reached through a job's SSH connection is reachable only from this machine: give the agent as an http(s) endpoint the nodes can reach";
  return null;
}

export interface ClusterPlayDeps {
  db: Db;
  dataDir: string;
  store: EpisodeStore;
  runs: RunService;
  /** Never opened for a cluster target (episodes are played back); the sweep's driver asks for one. */
  runtime: RuntimePort;
}

export interface ClusterPlaySpec {
  target: Exclude<SweepTarget, { kind: 'local' }>;
  dispatch: DispatchSettings;
  roundId: string;
  seq: number | null;
  idx: number;
  hash: string;
  name: string;
  envId: number | null;
  /** The round's hint for the game (null: only the unhinted arm plays, regret 0 as SPADE scores a failed hint). */
  hint: string | null;
  seeds: number;
  budget: number;
  stepTimeoutSec: number;
  model: SweepModel;
  /** Keep each step's game state, as the caller's local play does (the app's, for a few seeds). */
  states?: boolean;
  /** The endpoint as the caller's local play keeps it in the run record (StoredRegretOptions.recordEndpoint). */
  recordEndpoint?: Record<string, unknown>;
  /** Which regret (SPADE's: its counts, `seeds` unused); the round's. */
  estimator: RegretEstimator;
  spade?: Partial<SpadeEstimatorOptions>;
  /** The game's file stem where it has one (SPADE's seeds hash the game's file path). */
  fileStem?: string | null;
}

/**
 * Plays one accepted game on the cluster as a regret sweep whose run record is the game's
 * (gameRunId); returns every episode's result. Throws SweepCancelled when the signal fires (its
 * tasks stopped on the engine) and an Error when episodes got no result.
 */
export async function playGameOn(d: ClusterPlayDeps, s: ClusterPlaySpec, signal: AbortSignal): Promise<{ runId: string; results: JobResult[]; sweepId: string }> {
  const runId = gameRunId(s.roundId, s.idx);
  const items: SweepItem[] = [];
  const file = s.envId !== null ? `memory:${s.envId}` : s.hash;
  const spade = s.estimator === 'spade' ? spadeOptions(s.spade) : null;
  if (spade) {
    for (const j of spadeJobs(s.hash, spadeGamePath({ name: s.name, fileStem: s.fileStem ?? null }, s.hash), s.hint !== null, spade)) items.push({ key: jobKey(j), file, sha256: s.hash, name: s.name, hint: s.hint, seed: j.seed, ...(j.slot !== undefined ? { slot: j.slot } : {}), arm: j.hint ? 'hint' : 'nohint' });
  } else {
    for (let k = 0; k < s.seeds; k++) {
      for (const arm of s.hint === null ? (['nohint'] as const) : (['hint', 'nohint'] as const)) {
        items.push({ key: episodeKey(s.hash, arm === 'hint', k), file, sha256: s.hash, name: s.name, hint: s.hint, seed: k, arm });
      }
    }
  }
  const stored: StoredRegretOptions = {
    regret: { policy: { kind: 'solution' }, budget: s.budget, stepTimeoutSec: s.stepTimeoutSec, model: s.model, seeds: s.seeds, seedStart: 0, ...(s.states ? { states: true } : {}), estimator: s.estimator, ...(spade ? { spade } : {}) },
    // A shard a seed's two arms: a game's few episodes spread over the nodes without a task each.
    dispatch: { ...s.dispatch, shardSize: 2 },
    target: s.target,
    runId,
    ...(s.recordEndpoint ? { recordEndpoint: s.recordEndpoint } : {}),
  };
  const query = roundSelection(s.seq);
  const ident = createHash('sha256').update(JSON.stringify(['design-plays', runId])).digest('hex').slice(0, 16);
  const sweep = createSweep(d.db, { kind: regretSweeps.kind, ident: sweepIdent(targetLabel(s.target), query, ident, items.map((i) => i.key)), target: targetLabel(s.target), query, options: stored, items });
  const out = await driveRegretSweep({ db: d.db, dataDir: d.dataDir, store: d.store, runs: d.runs, runtime: d.runtime, concurrency: 1 }, sweep, { signal });
  return { runId, results: out.results, sweepId: sweep.id };
}

/**
 * A played game's numbers from its episodes, as the command line's round computes them wherever
 * they were played: SPADE's arithmetic over the seeds both arms finished (summarize), win rates as
 * the share of finished episodes of each arm whose return is above 0.
 */
export function outcomeOfResults(results: readonly JobResult[], hash: string, hintFailed: boolean, on: string, estimator: RegretEstimator): PlayOutcome {
  const ok = results.filter((e) => !e.failed);
  const share = (xs: readonly JobResult[]) => (xs.length ? xs.filter((e) => e.ret > 0).length / xs.length : 0);
  const e = summarize([...results], hash, hintFailed, estimator);
  // SPADE's hinted arm counts a failed play (as 0.0); paired seeds only the finished ones.
  const hinted = estimator === 'spade' ? results.filter((x) => x.hint).map((x) => (x.failed ? { ...x, ret: 0 } : x)) : ok.filter((x) => x.hint);
  return { rHint: e.rHint, rNoHint: e.rNoHint, regret: e.regret, winRate: share(ok.filter((x) => !x.hint)), hintedWinRate: share(hinted), episodes: results.length, failed: results.length - ok.length, on, estimator };
}

/**
 * A played game's numbers as the app's round reads them from the game's run record (the run's
 * measurement: paired seeds, "not measured" unless enough seeds played), wherever it was played.
 */
export function outcomeOfRun(r: ModelRun, on: string): PlayOutcome {
  const e = r.envs[0];
  if (!e || e.regret === null || e.winRate === null || e.rNoHint === null) throw new Error(e?.notMeasured ?? (r.cancelled ? 'play was cancelled' : 'play measured nothing'));
  const hinted = e.hintReturns;
  return {
    rHint: e.rHint ?? e.rNoHint,
    rNoHint: e.rNoHint,
    regret: e.regret,
    winRate: e.winRate,
    hintedWinRate: hinted.length ? hinted.filter((x) => x > 0).length / hinted.length : 0,
    episodes: r.episodes.length,
    failed: r.episodes.filter((x) => x.failed).length,
    on,
    estimator: r.estimator,
  };
}

/** The run record of a command-line round's game played here: the shape a cluster's play records, `on: local`. */
export function localGameRun(spec: { runId: string; seq: number | null; hash: string; name: string | null; fileStem?: string | null; seeds: number; budget: number; model: SweepModel; estimator: RegretEstimator; spade?: Partial<SpadeEstimatorOptions> }): NewRun {
  const m = spec.model;
  const spade = spec.estimator === 'spade' ? spadeOptions(spec.spade) : null;
  return {
    id: spec.runId,
    model: m.model,
    endpoint: m.baseUrl,
    config: {
      endpoint: { baseUrl: m.baseUrl, model: m.model, ...(m.apiKeyEnv ? { apiKeyEnv: m.apiKeyEnv } : {}), on: 'local' },
      sampling: { temperature: m.temperature, topP: m.topP, topK: m.topK, maxTokens: m.maxTokens, thinking: m.thinking },
      hintText: null,
      ...(spade ? { spade: { ...spade, gamePaths: { [spec.hash]: spadeGamePath({ name: spec.name, fileStem: spec.fileStem ?? null }, spec.hash) } } } : {}),
    },
    hintSource: 'library',
    seeds: spec.seeds,
    seedStart: 0,
    arms: ['hint', 'nohint'],
    maxTurns: spec.budget,
    runtime: 'auto',
    selection: roundSelection(spec.seq),
    hashes: [spec.hash],
    estimator: spec.estimator,
  };
}
