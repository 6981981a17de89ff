/**
 * Regret runs: N seeds of one environment (or of a library selection), each played with and
 * without the hint by a policy (a script, solution(), random guesses, or a served model), scored
 * with SPADE's return and SPADE's regret arithmetic. Episodes run K at a time; every finished one
 * is recorded at once with its run id, so a cancelled run resumes without losing or repeating one.
 */
import { randomInt } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { errorMessage } from '../api/errorMessage';
import { DomainError } from '../errors';
import type { EpisodeContext, RuntimeChoice } from './context';
import { EnvLoadError, refusalText, SpadeRefusal, type EnvSession } from './session';
import { episodeReturn, spadeRegret, type AgentTurn } from './spade';
import { spadeAggregate, type RegretEstimator } from './estimator';
import type { EpisodeMeta, StepRecord } from './episodeStore';

/** One episode as a player left it: the recording from the reset on, and how it ended. */
export interface PlayedEpisode {
  steps: StepRecord[];
  turns: AgentTurn[];
  /**
   * 'env': the game ended it; 'budget': out of agent turns; 'length': a model turn hit max_tokens;
   * 'error': the policy failed; 'refused': SPADE's load refused the game, so nothing was played.
   */
  endedBy: 'env' | 'budget' | 'length' | 'error' | 'refused';
  policy: Record<string, unknown>;
  /** Extra to keep with the episode (a model's messages and turns). */
  meta?: Record<string, unknown>;
  /** Why the policy failed (endedBy 'error'): the endpoint's error, a timeout. */
  error?: string | null;
}

export interface ArmSpec {
  hint: boolean;
  hintText: string | null;
  /** Null: reset with no seed (SPADE's unhinted plays, orchestrator.py:335). */
  seed: number | null;
  /** With seed null: the number the interpreter's random starts from before that reset, kept as meta.preseed. */
  preseed?: number;
  budget: number;
  toolUse: boolean;
}

/**
 * Plays one episode on an opened session (it resets it itself). `prepare`, where given, sends the
 * player's first harness calls ahead (`prefetchTools`, `prefetchReset`), exactly those and in its
 * order, so a run can load the next episode while the current one waits on its policy.
 */
export type Player = ((session: EnvSession, arm: ArmSpec, signal: AbortSignal) => Promise<PlayedEpisode>) & {
  prepare?(session: EnvSession, arm: ArmSpec): void;
};

export interface RegretJob {
  hash: string;
  hint: boolean;
  /** Null: an unseeded reset (SPADE's estimator's unhinted plays), told apart by `slot`. */
  seed: number | null;
  slot?: number;
}

export interface JobResult extends RegretJob {
  episodeId: number;
  /** SPADE's return; meaningless (0) when failed, and never counted then. */
  ret: number;
  endedBy: PlayedEpisode['endedBy'];
  /**
   * The episode has no return: the policy failed (endpoint error, timeout), the harness crashed or
   * the game did not load. It is left out of every mean, and a resume plays it again.
   */
  failed: boolean;
  error: string | null;
  /** SPADE's load refused the game (its message, word for word): scored as SPADE scores it (see one()). */
  refused?: { stage: string; message: string };
}

export interface RunControl {
  cancel: boolean;
  abort: AbortController;
}

/** Seeds alternate between the arms (seed s with the hint, then without), so a cancelled run compares the same seeds. */
export function regretJobs(hashes: string[], seeds: number, seedStart: number, arms: ('hint' | 'nohint')[] = ['hint', 'nohint']): RegretJob[] {
  const jobs: RegretJob[] = [];
  for (const hash of hashes) for (let k = 0; k < seeds; k++) for (const a of arms) jobs.push({ hash, hint: a === 'hint', seed: seedStart + k });
  return jobs;
}

/** A job's key; an unseeded play is `u` and its slot, so a resume knows which of them it has. */
export const jobKey = (j: Pick<RegretJob, 'hash' | 'hint' | 'seed' | 'slot'>): string => `${j.hash}:${j.hint ? 1 : 0}:${j.seed === null ? `u${j.slot ?? 0}` : j.seed}`;

/** The slot of an unseeded job from its key (`HASH:0:u3`), or undefined. */
function slotOfKey(key: string): number | undefined {
  const m = /:u(\d+)$/.exec(key);
  return m ? Number(m[1]) : undefined;
}

export interface RunOptions {
  runId: string;
  jobs: RegretJob[];
  player: Player;
  concurrency: number;
  budget: number;
  runtime: RuntimeChoice;
  hintFor(hash: string): string | null;
  control: RunControl;
  progress?(done: number, total: number, last: JobResult | null): void;
  /** Each episode as it is recorded (a run record keeps one row per episode). */
  recorded?(r: JobResult): void;
  label?: string;
  /** The run's episodes recorded before, where the caller knows them more cheaply than a scan of every episode. */
  recordedBefore?: EpisodeMeta[];
  /**
   * SPADE's estimator: an unhinted play that failed is played once more, a fresh load, before it is
   * dropped (orchestrator.py:1498 max_attempts=2, :1526-1547); only the last attempt is recorded.
   */
  retryNoHint?: boolean;
  /**
   * An unseeded play's interpreter random starts from a number drawn here and kept with the
   * episode (meta.preseed), so it replays; off where a node's recorded calls are played back (the
   * node reset without one).
   */
  preseedUnseeded?: boolean;
}

/** Runs the jobs not yet recorded under runId, K at a time; returns every job's result (resumed ones included). */
export async function runJobs(ctx: EpisodeContext, o: RunOptions): Promise<{ results: JobResult[]; cancelled: boolean }> {
  // Every in-flight model turn listens on the run's abort signal.
  setMaxListeners(0, o.control.abort.signal);
  const have = new Map<string, JobResult>();
  for (const m of o.recordedBefore ?? ctx.d.store.byRun(o.runId)) {
    const key = typeof m.meta.job === 'string' ? m.meta.job : null;
    // A failed episode is played again on resume (its record stays, marked failed); SPADE's refusal
    // is an answer, kept as it was counted.
    const refusal = refusedOf(m.meta);
    if (!key || (isFailed(m.meta) && !refusal)) continue;
    const ret = typeof m.meta.spadeReturn === 'number' ? m.meta.spadeReturn : refusal ? 0 : m.totalReturn;
    const error = refusal && typeof m.meta.error === 'string' ? m.meta.error : null;
    const slot = slotOfKey(key);
    have.set(key, { hash: m.envHash, hint: m.hintEnabled, seed: slot !== undefined ? null : (m.seed ?? 0), ...(slot !== undefined ? { slot } : {}), episodeId: m.id, ret, endedBy: (m.meta.endedBy as JobResult['endedBy']) ?? 'env', failed: isFailed(m.meta), error, ...(refusal ? { refused: refusal } : {}) });
  }
  const todo = o.jobs.filter((j) => !have.has(jobKey(j)));
  let done = o.jobs.length - todo.length;
  o.progress?.(done, o.jobs.length, null);
  let next = 0;
  const changed: number[] = [];
  /**
   * A job's environment and hint, read once, and its session loading (sent the player's first
   * calls) ahead of its turn; no session for a hinted job without a hint, which fails on its turn.
   */
  type Prepared = { job: RegretJob; env: ReturnType<EpisodeContext['env']>; hintText: string | null; session: Promise<EnvSession> | null; preseed?: number };
  const armOf = (p: Prepared, session: EnvSession): ArmSpec => ({ hint: p.job.hint, hintText: p.hintText, seed: p.job.seed, ...(p.preseed !== undefined ? { preseed: p.preseed } : {}), budget: o.budget, toolUse: session.info.toolUse });
  const drawPreseed = (): number | undefined => (o.preseedUnseeded ? randomInt(2 ** 31) : undefined);
  // Each environment is read from memory once per run (every seed and arm plays the version the run started with).
  const envs = new Map<string, Prepared['env']>();
  const envOf = (hash: string): Prepared['env'] => {
    let env = envs.get(hash);
    if (!env) envs.set(hash, (env = ctx.env(hash)));
    return env;
  };
  const prepare = (job: RegretJob): Prepared => {
    const env = envOf(job.hash);
    const hintText = job.hint ? o.hintFor(job.hash) : null;
    const preseed = job.seed === null ? drawPreseed() : undefined;
    const p: Prepared = { job, env, hintText, session: null, ...(preseed !== undefined ? { preseed } : {}) };
    if (job.hint && hintText === null) return p;
    p.session = ctx.openSession(env.source, o.budget, o.runtime, true).then((s) => {
      o.player.prepare?.(s, armOf(p, s));
      return s;
    });
    p.session.catch(() => {}); // a load failure is reported when the job's turn comes
    return p;
  };
  const one = async (p: Prepared, started: () => void): Promise<void> => {
    const { job, env, hintText } = p;
    if (!p.session) throw new DomainError('invalid_input', `Environment ${job.hash.slice(0, 12)} has no hint to play with`);
    let session: EnvSession | null = null;
    // Typed wide: the attempts below assign them in a closure.
    let played = null as PlayedEpisode | null;
    let crash = null as string | null;
    let refused: SpadeRefusal | null = null;
    try {
      session = await p.session;
    } catch (e) {
      if (e instanceof SpadeRefusal && !job.hint) {
        // SPADE plays an unhinted game up to twice, each a fresh load, before the play is FAILED
        // (orchestrator.py:1498 max_attempts=2, :1526-1547): a refusal that depends on the
        // process's state may pass the second time.
        try {
          session = await ctx.openSession(env.source, o.budget, o.runtime, false);
        } catch (again) {
          e = again;
        }
      }
      if (!session) {
        if (e instanceof SpadeRefusal) refused = e;
        // EnvLoadError already says the environment did not load; anything else gets that said.
        else crash = e instanceof EnvLoadError ? e.message : `The environment did not load: ${errorMessage(e)}`;
      }
    }
    started();
    const play = async (s: EnvSession): Promise<void> => {
      try {
        played = await o.player(s, armOf(p, s), o.control.abort.signal);
      } catch (e) {
        // The harness or the runtime failed under the episode: no return, a failed episode.
        crash = `the episode crashed: ${errorMessage(e)}`;
      } finally {
        // Closing needs no answer before the next episode starts (the interpreter frees it in order).
        void s.close();
      }
    };
    if (session) await play(session);
    const failedPlay = (): boolean => crash !== null || played?.endedBy === 'error';
    if (o.retryNoHint && !job.hint && session && !o.control.cancel && failedPlay()) {
      crash = null;
      played = null;
      // SPADE's second attempt is a fresh load and a fresh draw.
      const again = drawPreseed();
      if (again !== undefined) p.preseed = again;
      try {
        await play(await ctx.openSession(env.source, o.budget, o.runtime, false));
      } catch (e) {
        crash = e instanceof EnvLoadError ? e.message : `The environment did not load: ${errorMessage(e)}`;
      }
    }
    // A cancel that aborted this episode mid-way keeps nothing: the resume plays it whole.
    if (o.control.cancel && !refused && (crash !== null || played?.endedBy === 'error')) return;
    // SPADE's refusal ends the episode where SPADE's ends, at its load, and counts as SPADE counts
    // it: a hinted play returns 0.0 (orchestrator.py:1830-1832, averaged into R(hint) at :1980); an
    // unhinted one is a FAILED trajectory, dropped from R(no hint) (:1614-1623; a game none of
    // whose plays survived counts 0.0 there, :2046, as spadeRegret's empty arm does).
    const endedBy: PlayedEpisode['endedBy'] = refused ? 'refused' : (played?.endedBy ?? 'error');
    const failed = refused ? !job.hint : endedBy === 'error';
    const error = refused ? refusalText(refused.spadeMessage, job.hint) : failed ? (crash ?? played?.error ?? 'the policy failed') : null;
    const ret = failed || refused || !played ? 0 : episodeReturn(played.turns, played.endedBy);
    const refusal = refused ? { stage: refused.stage, message: refused.spadeMessage } : null;
    const id = ctx.d.store.create({
      envHash: job.hash,
      envName: env.name,
      className: session?.info.className ?? null,
      seed: job.seed,
      hintEnabled: job.hint,
      hintText,
      maxTurns: o.budget,
      runtime: session?.info.runtime ?? String(o.runtime),
      origin: 'regret',
      label: `${o.label ?? 'regret'} ${job.hint ? 'with' : 'without'} hint, ${job.seed === null ? `unseeded play ${(job.slot ?? 0) + 1}` : `seed ${job.seed}`}${refused ? ' (refused by SPADE at load)' : failed ? ' (failed)' : ''}`,
      policy: played?.policy ?? {},
      meta: {
        ...(played?.meta ?? {}),
        run: o.runId,
        job: jobKey(job),
        // SPADE's unhinted plays reset with no seed (orchestrator.py:335): said so, never a made-up seed.
        ...(job.seed === null ? { unseeded: true, slot: job.slot ?? 0, ...(p.preseed !== undefined ? { preseed: p.preseed } : {}) } : {}),
        ...(failed ? { failed: true, error } : { spadeReturn: ret }),
        ...(refusal ? { refused: refusal, error } : {}),
        endedBy,
        toolUse: session?.info.toolUse ?? false,
      },
    });
    if (played) ctx.d.store.appendSteps(id, played.steps);
    const r: JobResult = { ...job, episodeId: id, ret, endedBy, failed, error, ...(refusal ? { refused: refusal } : {}) };
    o.recorded?.(r);
    have.set(jobKey(job), r);
    changed.push(id);
    done++;
    o.progress?.(done, o.jobs.length, r);
  };
  const take = (): Prepared | null => {
    const job = todo[next++];
    return job ? prepare(job) : null;
  };
  // Each worker loads its next job's session while the current episode waits on the model, so the
  // load and get_tools() round trips leave the episode's critical path (policy.regret_throughput_ratio).
  // Every worker gets its first job before any looks ahead, so a short run still spreads over them.
  const firsts = Array.from({ length: Math.max(1, Math.min(o.concurrency, todo.length)) }, take);
  const worker = async (first: Prepared | null): Promise<void> => {
    let ahead: Prepared | null = first;
    try {
      while (!o.control.cancel) {
        const cur: Prepared | null = ahead ?? take();
        if (!cur) return;
        ahead = null;
        // The look-ahead loads once this episode has its session: at the start of a run the first
        // episodes' loads then do not queue behind the loads of the episodes that follow them.
        await one(cur, () => {
          if (!o.control.cancel) ahead = take();
        });
      }
    } finally {
      // Loaded for a job this worker will not play (cancelled, or the run failed): closed unplayed;
      // nothing of it is recorded, so a resume plays it.
      if (ahead?.session) void ahead.session.then((s) => s.close(), () => {});
    }
  };
  try {
    await Promise.all(firsts.map(worker));
  } finally {
    if (changed.length) ctx.d.changed?.(changed);
  }
  return { results: o.jobs.map((j) => have.get(jobKey(j))).filter((r): r is JobResult => !!r), cancelled: o.control.cancel };
}

export interface ArmSummary {
  hint: boolean;
  returns: number[];
  mean: number;
  solveRate: number;
  episodeIds: number[];
}

/** SPADE's refusal an episode records (meta.refused), or null. */
export function refusedOf(meta: Record<string, unknown>): { stage: string; message: string } | null {
  const r = meta.refused as { stage?: unknown; message?: unknown } | undefined;
  return r && typeof r.stage === 'string' && typeof r.message === 'string' ? { stage: r.stage, message: r.message } : null;
}

/** An episode recorded as failed (the runner's mark; older recordings: a policy that ended in error). */
export function isFailed(meta: Record<string, unknown>): boolean {
  return meta.failed === true || meta.endedBy === 'error';
}

function arm(hint: boolean, rs: JobResult[]): ArmSummary {
  const returns = rs.map((r) => r.ret);
  return { hint, returns, mean: returns.reduce((a, b) => a + b, 0) / Math.max(1, returns.length), solveRate: returns.filter((x) => x > 0).length / Math.max(1, returns.length), episodeIds: rs.map((r) => r.episodeId) };
}

/**
 * One environment's arms and regret by the chosen estimator: SPADE's (every hinted play counts, a
 * failed one as 0.0; failed unhinted plays dropped; estimator.ts) or paired seeds (the seeds both
 * arms finished, a cancelled run stays paired).
 */
export function summarize(results: JobResult[], hash: string, hintFailed: boolean, estimator: RegretEstimator): { withHint: ArmSummary; withoutHint: ArmSummary; regret: number; rHint: number; rNoHint: number; estimator: RegretEstimator } {
  if (estimator === 'spade') {
    const mine = results.filter((r) => r.hash === hash);
    // A refused hinted play is finished with 0.0 (not failed); a refused unhinted one is failed, so dropped.
    const s = spadeAggregate(mine.map((r) => ({ hint: r.hint, ret: r.ret, failed: r.failed })), hintFailed);
    const w = mine.filter((r) => r.hint).map((r) => (r.failed ? { ...r, ret: 0 } : r));
    const wo = mine.filter((r) => !r.hint && !r.failed);
    return { withHint: arm(true, w), withoutHint: arm(false, wo), regret: s.regret, rHint: s.rHint, rNoHint: s.rNoHint, estimator };
  }
  // A failed episode has no return: left out of both arms (SPADE's trainer counts a failed hinted
  // generation as 0; a measurement of a model must not read a dead endpoint as a return). A seed
  // SPADE refused is finished all the same (its hinted play counts 0.0, its unhinted one is
  // dropped, as SPADE drops it), so it pairs like a played one.
  const finished = results.filter((r) => r.hash === hash && (!r.failed || r.refused));
  const hinted = new Set(finished.filter((r) => r.hint).map((r) => r.seed));
  const plain = new Set(finished.filter((r) => !r.hint).map((r) => r.seed));
  // Paired seeds only when both arms played at all (a one-arm run keeps all its episodes).
  const both = (r: JobResult) => !hinted.size || !plain.size || (hinted.has(r.seed) && plain.has(r.seed));
  const mine = finished.filter((r) => !r.failed);
  const w = mine.filter((r) => r.hint && both(r));
  const wo = mine.filter((r) => !r.hint && both(r));
  const s = spadeRegret({ hintReturns: w.map((r) => r.ret), noHintReturns: wo.map((r) => r.ret), hintFailed });
  return { withHint: arm(true, w), withoutHint: arm(false, wo), regret: s.regret, rHint: s.rHint, rNoHint: s.rNoHint, estimator };
}
