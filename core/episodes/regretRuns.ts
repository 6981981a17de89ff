/**
 * The regret calls: SPADE's hint-based regret over N seeds of one environment or of a library
 * selection, with runs in progress kept by runId so a person can cancel one and resume it later.
 * The playing and the arithmetic live in core/episodes/regret.ts.
 */
import { DomainError } from '../errors';
import type { Policy } from '../api/calls/episodes';
import type { EpisodeContext, RuntimeKind } from './context';
import { scriptedPlayer } from './policy';
import { measuredArms } from './regretReport';
import { regretJobs, runJobs, summarize, type JobResult, type Player, type RunControl } from './regret';
import { spadeGamePath, spadeJobs, spadeOptions, type RegretEstimator, type SpadeEstimatorOptions } from './estimator';

export interface RegretManyInput {
  hashes: string[];
  /**
   * Which regret: SPADE's (its counts, seeds from the game's path, unseeded unhinted plays; `seeds`
   * and `seedStart` unused) or paired seeds (`seeds` of each arm from `seedStart`). This engine-level
   * call pairs unless told; every command and page that plays a regret chooses SPADE's by default.
   */
  estimator?: RegretEstimator | undefined;
  spade?: Partial<SpadeEstimatorOptions> | undefined;
  seeds: number;
  seedStart: number;
  policy?: Policy | undefined;
  hintPolicy?: Policy | undefined;
  player?: Player;
  hintFor?(hash: string): string | null | undefined;
  maxTurns?: number | undefined;
  runtime?: RuntimeKind | undefined;
  runId?: string | undefined;
  concurrency?: number | undefined;
  arms?: ('hint' | 'nohint')[];
  progress?(done: number, total: number): void;
  recorded?(r: JobResult): void;
}

export interface RegretInput extends Omit<RegretManyInput, 'hashes' | 'hintFor' | 'arms' | 'progress' | 'recorded' | 'estimator'> {
  hash: string;
  /** The Play page's side-by-side comparison of one environment: paired seeds unless asked (episodes.regret). */
  estimator?: RegretEstimator | undefined;
  hintText?: string | undefined;
}

export class RegretRuns {
  /** Regret runs in progress, by runId: cancel flag and the abort for in-flight model turns. */
  private readonly running = new Map<string, RunControl>();

  constructor(private readonly ctx: EpisodeContext) {}

  /**
   * SPADE's hint-based regret over N seeds of one environment with a scripted policy or a player
   * (a served model). A runId makes it cancellable and resumable: a second call with the same
   * runId plays only the episodes not yet recorded.
   */
  async regret(input: RegretInput) {
    const env = this.ctx.env(input.hash);
    const hintText = input.hintText ?? env.hint;
    const r = await this.regretMany({ ...input, hashes: [input.hash], hintFor: () => hintText });
    const one = r.envs[0]!;
    // Without a hinted arm (no hint) or with an arm that never returned, regret is not measured (null), never 0.
    return { withHint: one.withHint, withoutHint: one.withoutHint, regret: measuredArms(one).regret, hintText: hintText ?? null, cancelled: r.cancelled };
  }

  /** Regret over several environments (a library selection): per environment, SPADE's arithmetic. */
  async regretMany(input: RegretManyInput) {
    const { ctx } = this;
    const player = input.player ?? (input.policy ? scriptedPlayer(input.policy, input.hintPolicy) : null);
    if (!player) throw new DomainError('invalid_input', 'A regret run needs a policy');
    const budget = input.maxTurns ?? ctx.d.defaults().maxTurns;
    const hintFor = (h: string): string | null => (input.hintFor ? input.hintFor(h) : undefined) ?? ctx.env(h).hint;
    for (const h of input.hashes) ctx.env(h);
    const runId = input.runId ?? `run-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    if (this.running.has(runId)) throw new DomainError('conflict', `A regret run ${runId} is already running`);
    const control: RunControl = { cancel: false, abort: new AbortController() };
    this.running.set(runId, control);
    // Environments without a hint play only their unhinted arm; their regret is not measured (SPADE: hint generation failed, scored 0 by its trainer).
    const spade = spadeOptions(input.spade);
    const estimator: RegretEstimator = input.estimator ?? 'paired';
    const gamePaths = Object.fromEntries(input.hashes.map((h) => [h, spadeGamePath(ctx.env(h), h)]));
    const jobs = input.hashes.flatMap((h) =>
      estimator === 'spade'
        ? spadeJobs(h, gamePaths[h]!, hintFor(h) !== null && (input.arms ?? ['hint', 'nohint']).includes('hint'), spade).filter((j) => j.hint || (input.arms ?? ['nohint']).includes('nohint'))
        : regretJobs([h], input.seeds, input.seedStart, hintFor(h) === null ? ['nohint'] : (input.arms ?? ['hint', 'nohint'])),
    );
    const started = performance.now();
    let firstDone: number | null = null;
    try {
      const { results, cancelled } = await runJobs(ctx, {
        runId,
        jobs,
        player,
        concurrency: input.concurrency ?? 1,
        budget,
        runtime: input.runtime ?? 'auto',
        hintFor,
        control,
        retryNoHint: estimator === 'spade',
        preseedUnseeded: true,
        ...(input.recorded ? { recorded: input.recorded } : {}),
        progress: (done, total, last) => {
          if (!last) {
            firstDone = done;
            return;
          }
          input.progress?.(done, total);
          const fresh = done - (firstDone ?? 0);
          const per = fresh > 0 ? (performance.now() - started) / 1000 / fresh : null;
          if (input.runId !== undefined) ctx.d.regretProgress?.({ runId, done, total, etaSec: per === null ? null : (total - done) * per });
        },
      });
      const envs = input.hashes.map((h) => ({ hash: h, name: ctx.env(h).name, hintFailed: hintFor(h) === null, ...summarize(results, h, hintFor(h) === null, estimator), ...(estimator === 'spade' ? { gamePath: gamePaths[h]! } : {}) }));
      return { runId, envs, cancelled, episodes: results, estimator, ...(estimator === 'spade' ? { spade } : {}) };
    } finally {
      this.running.delete(runId);
    }
  }

  /** Asks a running regret run to stop: no new episode starts, in-flight model turns are aborted. */
  cancel(runId: string): boolean {
    const run = this.running.get(runId);
    if (!run) return false;
    run.cancel = true;
    run.abort.abort();
    return true;
  }
}

