/**
 * A regret sweep: SPADE's hint-based regret over a pool (a library query) with a scripted policy,
 * each episode (version, seed, arm) an item of a sweep that runs here (the default), on a Ray
 * cluster or as a Slurm job array, by the same machinery as a pool audit (core/sweeps).
 * Every episode is recorded as it arrives (the episode with its steps, a row of the model-run
 * record, the sweep's result), a killed workbench resumes with nothing lost or counted twice, and
 * the end computes regret with SPADE's arithmetic exactly as a local run does (regret.ts summarize).
 */
import { createHash } from 'node:crypto';
import type { Policy } from '../api/calls/episodes';
import type { OnResult, SweepExecutor, SweepWork } from '../sweeps/executor';
import { driveSweep, type SweepProgress } from '../sweeps/sweep';
import { asOwner } from '../sweeps/sweepOwner';
import { createSweep, headHashes, targetsFor, unfinishedSweep, versionSources, sweepIdent, sweepResults, type SweepItem, type SweepRow } from '../sweeps/sweepStore';
import { remoteExecutor, targetLabel, type DispatchSettings, type SweepTarget } from '../sweeps/targets';
import type { Db } from '../memory/db';
import { search } from '../memory/repository';
import type { RunService } from './service';
import { memoryCatalog } from '../episodes/catalog';
import { EpisodeContext, type EpisodeDeps } from '../episodes/context';
import { describePolicy, scriptedPlayer } from '../episodes/policy';
import { PlaybackChatClient, PlaybackRuntime, regretSweeps, regretWork, sweepClient, type RecordedCall, type RegretOutcome, type RegretRemoteOptions } from '../episodes/regretRemote';
import { modelPlayer } from '../episodes/agent';
import type { ChatClient } from '../models/client';
import { jobKey, runJobs, summarize, type ArmSummary, type JobResult, type Player, type RegretJob, type RunControl } from '../episodes/regret';
import { spadeGamePath, spadeJobs, spadeOptions, type RegretEstimator, type SpadeEstimatorOptions } from '../episodes/estimator';
import type { EpisodeStore } from '../episodes/episodeStore';
import type { RegretEnvSummary, StoredRegretOptions } from '../episodes/regretReport';

export type { RegretEnvSummary, StoredRegretOptions };


/** The run record's "model" for a scripted policy: what played, as `runs list --model` names it. */
export function policyModel(p: Policy): string {
  return `policy:${p.kind}`;
}

/** An episode's key: the same as a local regret run's job key (version, arm, seed; `u` and the slot for an unseeded play). */
export function episodeKey(hash: string, hint: boolean, seed: number | null, slot?: number): string {
  return jobKey({ hash, hint, seed, ...(slot !== undefined ? { slot } : {}) });
}

/** A sweep item's job for runJobs. */
const itemJob = (it: SweepItem): RegretJob => ({ hash: it.sha256, hint: it.arm === 'hint', seed: it.seed === null ? null : (it.seed ?? 0), ...(it.slot !== undefined ? { slot: it.slot } : {}) });

/**
 * The pool's episodes: each head version matching `query` (once, however many environments share
 * it), every seed, with and without the hint; a version without a hint plays only unhinted (its
 * regret is not measured; SPADE's trainer scores a failed hint generation 0).
 */
export function regretItems(db: Db, query: string, seeds: number, seedStart: number, estimator: RegretEstimator = 'paired', spade?: SpadeEstimatorOptions): SweepItem[] {
  const rows = search(db, { query, limit: 1_000_000, filters: {} }).rows;
  const envIds = rows.map((r) => r.id).sort((a, b) => a - b);
  const catalog = memoryCatalog(db);
  const seen = new Set<string>();
  const items: SweepItem[] = [];
  for (const t of targetsFor(db, headHashes(db, envIds))) {
    if (seen.has(t.hash)) continue;
    seen.add(t.hash);
    const hint = catalog.byHash(t.hash)?.hint ?? null;
    if (estimator === 'spade') {
      // SPADE's episodes: hinted seeds from the game's path, unhinted plays unseeded (estimator.ts).
      for (const j of spadeJobs(t.hash, spadeGamePath(catalog.byHash(t.hash), t.hash), hint !== null, spadeOptions(spade))) {
        items.push({ key: jobKey(j), file: `memory:${t.envId}`, sha256: t.hash, name: t.name, hint, seed: j.seed, ...(j.slot !== undefined ? { slot: j.slot } : {}), arm: j.hint ? 'hint' : 'nohint' });
      }
      continue;
    }
    for (let k = 0; k < seeds; k++) {
      const seed = seedStart + k;
      for (const arm of hint === null ? (['nohint'] as const) : (['hint', 'nohint'] as const)) {
        items.push({ key: episodeKey(t.hash, arm === 'hint', seed), file: `memory:${t.envId}`, sha256: t.hash, name: t.name, hint, seed, arm });
      }
    }
  }
  return items;
}

/** The pool's episodes as a new sweep (and run record id), or the unfinished one of the same command. */
export function prepareRegretSweep(
  db: Db,
  query: string,
  fresh: Omit<StoredRegretOptions, 'runId'>,
  items: SweepItem[] = regretItems(db, query, fresh.regret.seeds, fresh.regret.seedStart, fresh.regret.estimator ?? 'paired', fresh.regret.spade),
): { sweep: SweepRow; stored: StoredRegretOptions; resumed: boolean } {
  const set = createHash('sha256').update(JSON.stringify({ kind: 'regret', policy: fresh.regret.model ? null : fresh.regret.policy, model: fresh.regret.model ?? null, budget: fresh.regret.budget, estimator: fresh.regret.estimator ?? 'paired' })).digest('hex').slice(0, 16);
  const ident = sweepIdent(targetLabel(fresh.target), query, set, items.map((i) => i.key));
  const again = unfinishedSweep(db, ident);
  if (again) return { sweep: again, stored: again.options as unknown as StoredRegretOptions, resumed: true };
  const runId = `run-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const stored: StoredRegretOptions = { ...fresh, runId };
  return { sweep: createSweep(db, { kind: regretSweeps.kind, ident, target: targetLabel(fresh.target), query, options: stored, items }), stored, resumed: false };
}

/**
 * This machine as a regret sweep's target: the episodes play in the workbench's own runtime by
 * the local run's code (runJobs), K at a time; their work lives in this process only.
 */
export class LocalRegretExecutor implements SweepExecutor<RegretOutcome> {
  readonly label = 'local';
  private readonly runs = new Map<string, readonly SweepItem[]>();

  constructor(private readonly o: { ctx: EpisodeContext; player: Player; budget: number; concurrency: number; runId: string; hintFor(hash: string): string | null; retryNoHint?: boolean }) {}

  async submit(sweepId: string, attempt: number, items: readonly SweepItem[]): Promise<Record<string, unknown>> {
    const id = `${sweepId}-${attempt}`;
    this.runs.set(id, items);
    return { kind: 'local', id };
  }

  async follow(handle: Record<string, unknown>, _work: SweepWork<RegretOutcome>, onResult: OnResult<RegretOutcome>, signal: AbortSignal): Promise<void> {
    const items = this.runs.get(String(handle.id));
    if (!items) return; // a local submission of an earlier process: gone with it
    this.runs.delete(String(handle.id));
    const control: RunControl = { cancel: false, abort: new AbortController() };
    const stop = () => {
      control.cancel = true;
      control.abort.abort();
    };
    signal.addEventListener('abort', stop, { once: true });
    const taken: Promise<void>[] = [];
    const handed = new Set<string>();
    const hand = (r: JobResult) => {
      const key = episodeKey(r.hash, r.hint, r.seed, r.slot);
      handed.add(key);
      taken.push(Promise.resolve(onResult(key, { kind: 'played', result: r }, null)));
    };
    try {
      const { results } = await runJobs(this.o.ctx, {
        runId: this.o.runId,
        jobs: items.map(itemJob),
        player: this.o.player,
        concurrency: this.o.concurrency,
        budget: this.o.budget,
        runtime: 'cpython',
        hintFor: this.o.hintFor,
        control,
        recorded: hand,
        ...(this.o.retryNoHint ? { retryNoHint: true } : {}),
        preseedUnseeded: true,
      });
      // Episodes a killed run recorded before the sweep kept them: handed over now (the sweep counts each once).
      if (!signal.aborted) for (const r of results) if ((!r.failed || r.refused) && !handed.has(episodeKey(r.hash, r.hint, r.seed, r.slot))) hand(r);
    } finally {
      signal.removeEventListener('abort', stop);
      await Promise.all(taken);
    }
  }

  async stop(): Promise<string> {
    return 'local episodes stop with the command';
  }

  async close(): Promise<void> {}
}

export interface RegretSweepDeps {
  db: Db;
  dataDir: string;
  store: EpisodeStore;
  runs: RunService;
  /** This machine's runtime (local sweeps play in it; played-back episodes never touch it). */
  runtime: EpisodeDeps['runtime'];
  concurrency: number;
  /** The model's API key for episodes played here (the app's secret); absent: the variable the sweep names. */
  apiKey?: string | null | undefined;
}


/** Runs (or resumes) a regret sweep to its end on its target; the run record is ended with it. */
type DriveHooks = { signal: AbortSignal; onProgress?: ((p: SweepProgress) => void) | undefined; onSubmitted?: ((h: Record<string, unknown>) => void) | undefined };
type Driven = { runId: string; results: JobResult[]; envs: RegretEnvSummary[] };

export async function driveRegretSweep(d: RegretSweepDeps, sweep: SweepRow, o: DriveHooks): Promise<Driven> {
  // One driver at a time, this process or another on the same memory file (the app and the CLI).
  return asOwner(d.db, sweep.id, 'Regret sweep', () => drive(d, sweep, o));
}

async function drive(d: RegretSweepDeps, sweep: SweepRow, o: DriveHooks): Promise<Driven> {
  const stored = sweep.options as unknown as StoredRegretOptions;
  const { policy, budget, seeds, seedStart, model, states } = stored.regret;
  const estimator = stored.regret.estimator ?? 'paired';
  const spade = estimator === 'spade' ? spadeOptions(stored.regret.spade) : null;
  const modelPolicy = model ? { kind: 'llm', endpoint: model.baseUrl, model: model.model, temperature: model.temperature, topP: model.topP, topK: model.topK, maxTokens: model.maxTokens, thinking: model.thinking } : null;
  // The player of every episode: the policy, or SPADE's agent over a client (the real one here, a node's answers in playback).
  const playerOf = (client: Pick<ChatClient, 'complete'> | null): Player =>
    model && client ? modelPlayer(client, { thinking: model.thinking === true, ...(spade?.thinking ? { thinkingByArm: spade.thinking } : {}), policy: modelPolicy!, ...(states ? { states: true } : {}) }) : scriptedPlayer(policy);
  const catalog = memoryCatalog(d.db);
  const hints = new Map(sweep.items.map((it) => [it.sha256, it.hint]));
  const hintFor = (h: string): string | null => hints.get(h) ?? null;
  const hashes = [...new Set(sweep.items.map((it) => it.sha256))];
  const deps = { store: d.store, catalog, defaults: () => ({ maxTurns: budget }) };
  const ctx = new EpisodeContext({ ...deps, runtime: d.runtime });
  const executor: SweepExecutor<RegretOutcome> =
    stored.target.kind === 'local' ? new LocalRegretExecutor({ ctx, player: playerOf(model ? sweepClient(model, d.concurrency, d.apiKey) : null), budget, concurrency: d.concurrency, runId: stored.runId, hintFor, retryNoHint: estimator === 'spade' }) : remoteExecutor<RegretOutcome>(stored.target, stored.dispatch, d.db, d.dataDir);
  const record = d.runs.begin({
    id: stored.runId,
    model: model ? model.model : policyModel(policy),
    endpoint: model ? model.baseUrl : sweep.target,
    config: {
      ...(model
      ? { endpoint: { ...(stored.recordEndpoint ?? { baseUrl: model.baseUrl, model: model.model, ...(model.apiKeyEnv ? { apiKeyEnv: model.apiKeyEnv } : {}) }), on: sweep.target, sweep: sweep.id }, sampling: { temperature: model.temperature, topP: model.topP, topK: model.topK, maxTokens: model.maxTokens, thinking: model.thinking }, hintText: null }
      : { endpoint: { policy: describePolicy(policy), on: sweep.target, sweep: sweep.id }, sampling: { temperature: 0, topP: 1, topK: null, maxTokens: 0, thinking: null }, hintText: null }),
      ...(spade ? { spade: { ...spade, gamePaths: Object.fromEntries(sweep.items.map((it) => [it.sha256, spadeGamePath(catalog.byHash(it.sha256), it.sha256)])) } } : {}),
    },
    hintSource: 'library',
    seeds,
    seedStart,
    arms: ['hint', 'nohint'],
    maxTurns: budget,
    runtime: 'cpython',
    selection: sweep.query,
    hashes,
    estimator,
  });
  let status: 'done' | 'cancelled' | 'failed' = 'failed';
  let error: string | null = null;
  try {
    const sources = versionSources(d.db, hashes);
    const lost = sweep.items.find((it) => !sources.has(it.sha256));
    if (lost) throw new Error(`Version ${lost.sha256.slice(0, 12)} of ${lost.name} is no longer in the library`);
    const got = await driveSweep<RegretOutcome>({
      db: d.db,
      sweep,
      sources,
      executor,
      work: regretWork({ policy, budget, stepTimeoutSec: stored.regret.stepTimeoutSec, ...(model ? { model } : {}), ...(model && states ? { states: true } : {}) }),
      signal: o.signal,
      ...(o.onProgress ? { onProgress: o.onProgress } : {}),
      ...(o.onSubmitted ? { onSubmitted: o.onSubmitted } : {}),
      accept: async (it, outcome) => {
        const r =
          outcome.kind === 'played'
            ? outcome.result
            : await playBack(deps, stored.runId, it, outcome.calls, playerOf(model ? new PlaybackChatClient(sweepClient(model), outcome.model ?? [], model.apiKeyEnv) : null), budget, hintFor);
        record(r);
        return { keep: r, failing: r.failed };
      },
    });
    status = 'done';
    const results = sweep.items.map((it) => got.get(it.key) as JobResult);
    return { runId: stored.runId, results, envs: sweepEnvs(d.db, sweep, results) };
  } catch (e) {
    status = o.signal.aborted ? 'cancelled' : 'failed';
    error = status === 'failed' ? (e as Error).message : null;
    throw e;
  } finally {
    d.runs.end(stored.runId, status, error);
    await executor.close();
  }
}

/** Each version of the sweep with SPADE's arithmetic over the given results (regret.ts summarize, as a local run computes it). */
export function sweepEnvs(db: Db, sweep: SweepRow, results: readonly JobResult[]): RegretEnvSummary[] {
  const estimator = (sweep.options as unknown as StoredRegretOptions).regret?.estimator ?? 'paired';
  const catalog = memoryCatalog(db);
  const hints = new Map(sweep.items.map((it) => [it.sha256, it.hint]));
  // Each version's own results, grouped once: summarize over the whole list per version would be quadratic in a large pool.
  const byHash = new Map<string, JobResult[]>(sweep.items.map((it) => [it.sha256, []]));
  for (const r of results) byHash.get(r.hash)?.push(r);
  return [...byHash].map(([h, mine]) => {
    const hintFailed = (hints.get(h) ?? null) === null;
    return { hash: h, name: catalog.byHash(h)?.name ?? null, hintFailed, ...summarize(mine, h, hintFailed, estimator) };
  });
}

/** What a sweep has kept so far (all of it once done): its results in item order and each version's summary. */
export function storedOutcome(db: Db, sweep: SweepRow): { runId: string; results: JobResult[]; envs: RegretEnvSummary[] } {
  const got = sweepResults<JobResult>(db, sweep.id);
  const results = sweep.items.map((it) => got.get(it.key)).filter((r): r is JobResult => r !== undefined);
  return { runId: (sweep.options as unknown as StoredRegretOptions).runId, results, envs: sweepEnvs(db, sweep, results) };
}

/** An episode the node played, played back here by the local run's code and recorded as it records one. */
async function playBack(deps: Omit<EpisodeDeps, 'runtime'>, runId: string, it: SweepItem, calls: RecordedCall[], player: Player, budget: number, hintFor: (h: string) => string | null): Promise<JobResult> {
  const ctx = new EpisodeContext({ ...deps, runtime: new PlaybackRuntime(calls) });
  const { results } = await runJobs(ctx, {
    runId,
    jobs: [itemJob(it)],
    player,
    concurrency: 1,
    budget,
    runtime: 'cpython',
    hintFor,
    control: { cancel: false, abort: new AbortController() },
    // Only this version's episodes can be this job's: read by the version's index, not by scanning every episode.
    recordedBefore: deps.store.byRunAndEnv(runId, it.sha256),
  });
  const r = results[0];
  if (!r) throw new Error(`the episode ${it.key} was not recorded`);
  return r;
}
