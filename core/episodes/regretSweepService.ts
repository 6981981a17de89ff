import { availableParallelism } from 'node:os';
import type { CallInput } from '../api';
import type { RegretReport, RegretSweepView } from '../api/calls/runs';
import { errorMessage } from '../api/errorMessage';
import { resolveTarget } from '../audit/dispatch/poolService';
import { SweepCancelled, type SweepProgress } from '../audit/dispatch/sweep';
import { getSweep, recentSweeps, regretSweepCounts, setSweepState, type SweepRow } from '../audit/dispatch/sweepStore';
import { remoteExecutor } from '../audit/dispatch/targets';
import { DomainError } from '../errors';
import type { Db } from '../memory/db';
import { SPADE_SAMPLING } from '../models/client';
import type { RunService } from '../runs/service';
import type { EventBus } from '../server/events';
import type { EpisodeDeps } from './context';
import type { SweepModel } from './regretRemote';
import { regretReport } from './regretReport';
import { driveRegretSweep, prepareRegretSweep, regretItems, storedOutcome, type StoredRegretOptions } from './regretSweep';
import type { EpisodeStore } from './store';

export interface RegretSweepServiceOptions {
  db: Db;
  dataDir: string;
  events: EventBus;
  store: EpisodeStore;
  runs: () => RunService;
  /** The app's runtime: a sweep on this machine plays in it. */
  runtime: EpisodeDeps['runtime'];
  /** SPADE's turn budget and the step limit as the user set them (the CLI's defaults are the same 30 turns and 30 s). */
  settings: () => { maxTurns: number; stepTimeoutSec: number };
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

type StartInput = CallInput<'runs.sweepStart'>;

interface Live {
  abort: AbortController;
  progress: SweepProgress | null;
  failedBefore: number;
  done: Promise<void>;
}

/** What played, in words: the Runs page's model column says the same (policy:solution, the model's name). */
function policyText(o: StoredRegretOptions['regret']): string {
  if (o.model) return `${o.model.model} at ${o.model.baseUrl}`;
  if (o.policy.kind === 'random') return o.policy.seed !== undefined ? `random guesses (seed ${o.policy.seed})` : 'random guesses';
  if (o.policy.kind === 'script') return `a script of ${o.policy.actions.length} action(s)`;
  return 'solution()';
}

/**
 * Regret sweeps started from the app: the same sweep as `regret --pool` (regretSweep.ts), run in
 * the background with its progress as `runs.sweepProgress`, cancellable (its tasks on the engine
 * stopped) and resumable; its episodes are kept as a model run, so the Runs page lists it.
 */
export class RegretSweepService {
  private readonly live = new Map<string, Live>();
  private closed = false;

  constructor(private readonly o: RegretSweepServiceOptions) {}

  start(input: StartInput): RegretSweepView {
    const query = input.query.trim();
    const { target, dispatch } = resolveTarget(this.o.db, input.target ?? { kind: 'local' });
    const p = input.policy;
    const model: SweepModel | undefined =
      p.kind === 'model'
        ? {
            baseUrl: p.baseUrl,
            model: p.model,
            temperature: p.temperature ?? SPADE_SAMPLING.temperature,
            topP: p.topP ?? SPADE_SAMPLING.topP,
            topK: p.topK === undefined ? SPADE_SAMPLING.topK : p.topK,
            maxTokens: p.maxTokens ?? SPADE_SAMPLING.maxTokens,
            thinking: p.thinking ?? null,
            turnTimeoutMs: SPADE_SAMPLING.turnTimeoutMs,
            retries: 4,
          }
        : undefined;
    const s = this.o.settings();
    const regret: StoredRegretOptions['regret'] = {
      // The CLI's `random[:SEED]`: guesses from 1 to 100 (SPADE's baseline); a model plays instead of the policy.
      policy: p.kind === 'random' ? { kind: 'random', lo: 1, hi: 100, ...(p.seed !== undefined ? { seed: p.seed } : {}) } : { kind: 'solution' },
      budget: input.maxTurns ?? s.maxTurns,
      seeds: input.seeds,
      seedStart: input.seedStart ?? 0,
      stepTimeoutSec: s.stepTimeoutSec,
      ...(model ? { model } : {}),
    };
    const items = regretItems(this.o.db, query, regret.seeds, regret.seedStart);
    if (!items.length) throw new DomainError('invalid_input', `No environment in the library matches "${query}"`);
    const prepared = prepareRegretSweep(this.o.db, query, { regret, dispatch, target }, items);
    if (prepared.resumed && this.live.has(prepared.sweep.id)) return this.view(prepared.sweep);
    return this.drive(prepared.sweep);
  }

  resume(id: string): RegretSweepView {
    const sweep = this.find(id);
    if (this.live.has(id)) return this.view(sweep);
    if (sweep.state === 'done') throw new DomainError('conflict', `Regret sweep ${id} is finished`);
    setSweepState(this.o.db, id, 'running');
    return this.drive(getSweep(this.o.db, id)!);
  }

  /** Stops the sweep's episodes (here, or its Ray job or Slurm array); what arrived stays. */
  async cancel(id: string): Promise<{ cancelled: boolean; stopped: string[] }> {
    const sweep = this.find(id);
    const l = this.live.get(id);
    if (l) {
      l.abort.abort();
      await l.done;
      return { cancelled: getSweep(this.o.db, id)!.state === 'cancelled', stopped: [] };
    }
    if (sweep.state !== 'running') return { cancelled: false, stopped: [] };
    // Interrupted: nothing follows it here, but its Ray job or Slurm array may still run (regret --cancel).
    const stored = sweep.options as unknown as StoredRegretOptions;
    const stopped: string[] = [];
    if (stored.target.kind !== 'local') {
      const ex = remoteExecutor(stored.target, stored.dispatch, this.o.db, this.o.dataDir);
      try {
        for (const h of sweep.remote) stopped.push(await ex.stop(h).catch((e: unknown) => `could not stop it: ${errorMessage(e)}`));
      } finally {
        await ex.close();
      }
    }
    setSweepState(this.o.db, id, 'cancelled');
    this.emit(getSweep(this.o.db, id)!, stopped.join('; ') || null);
    return { cancelled: true, stopped };
  }

  list(limit: number): RegretSweepView[] {
    return recentSweeps(this.o.db, limit, 'regret').map((s) => this.view(s));
  }

  /** The report `regret --json` prints, over what has arrived (all of it once the sweep is done). */
  report(id: string): RegretReport {
    const sweep = this.find(id);
    const out = storedOutcome(this.o.db, sweep);
    return regretReport(sweep, out, this.o.runs().get(out.runId));
  }

  busy(): number {
    return this.live.size;
  }

  /** Cancels what runs, as Ctrl-C does to the CLI (resumable), and waits for each to end. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.live.values()];
    for (const l of all) l.abort.abort();
    await Promise.all(all.map((l) => l.done));
  }

  private find(id: string): SweepRow {
    const sweep = getSweep(this.o.db, id);
    if (!sweep || sweep.kind !== 'regret') throw new DomainError('not_found', `No regret sweep ${id}${sweep ? ' (that is a pool audit sweep)' : ''}`);
    return sweep;
  }

  private drive(sweep: SweepRow): RegretSweepView {
    if (this.closed) throw new DomainError('unavailable', 'The workbench is shutting down');
    const abort = new AbortController();
    const l: Live = { abort, progress: null, failedBefore: regretSweepCounts(this.o.db, sweep.id).failed, done: Promise.resolve() };
    this.live.set(sweep.id, l);
    let last = 0;
    l.done = driveRegretSweep(
      { db: this.o.db, dataDir: this.o.dataDir, store: this.o.store, runs: this.o.runs(), runtime: this.o.runtime, concurrency: Math.max(1, Math.min(4, availableParallelism())) },
      sweep,
      {
        signal: abort.signal,
        onProgress: (p) => {
          l.progress = p;
          // The end goes out from finish(), once the sweep no longer runs here.
          if (p.phase === 'done' || p.phase === 'cancelled') return;
          if (p.phase === 'submitting' || Date.now() - last >= 250) {
            last = Date.now();
            this.emit(getSweep(this.o.db, sweep.id)!);
          }
        },
        onSubmitted: (h) => this.o.log?.('info', `regret sweep ${sweep.id} on ${sweep.target}: submitted ${JSON.stringify(h)}`),
      },
    ).then(
      () => this.finish(sweep.id, null),
      (e: unknown) => this.finish(sweep.id, e instanceof SweepCancelled ? (sweep.target === 'local' ? null : e.stopped.join('; ') || null) : errorMessage(e), !(e instanceof SweepCancelled)),
    );
    return this.view(getSweep(this.o.db, sweep.id)!);
  }

  private finish(id: string, message: string | null, failed = false): void {
    const l = this.live.get(id);
    this.live.delete(id);
    const s = getSweep(this.o.db, id);
    if (!s) return;
    // Failed before the sweep could mark it (a lost version, an engine refusing the submission).
    if (failed && s.state === 'running') setSweepState(this.o.db, id, 'failed');
    if (failed) this.o.log?.('error', `regret sweep ${id} on ${s.target}: ${message ?? 'failed'}`);
    this.emit(getSweep(this.o.db, id)!, message, l?.progress ?? null);
  }

  private emit(s: SweepRow, message: string | null = null, progress?: SweepProgress | null): void {
    this.o.events.emit('runs.sweepProgress', this.view(s, message, progress));
  }

  private view(s: SweepRow, message: string | null = null, progress?: SweepProgress | null): RegretSweepView {
    const l = this.live.get(s.id);
    const p = progress ?? l?.progress ?? null;
    const stored = s.options as unknown as StoredRegretOptions;
    // While it runs, its own counts (reading a large sweep's results four times a second would cost more than the episodes).
    const { done, failed } = l && p ? { done: p.done, failed: l.failedBefore + p.failed } : regretSweepCounts(this.o.db, s.id);
    const rate = p?.envsPerSec ?? null;
    const total = s.items.length;
    return {
      id: s.id,
      query: s.query,
      target: s.target,
      state: s.state === 'running' && !l ? 'interrupted' : s.state,
      phase: l && p && (p.phase === 'submitting' || p.phase === 'following') ? p.phase : null,
      done,
      total,
      failed,
      message,
      createdAt: s.createdAt,
      updatedAt: s.updatedAt,
      runId: stored.runId,
      policy: policyText(stored.regret),
      seeds: stored.regret.seeds,
      seedStart: stored.regret.seedStart,
      budget: stored.regret.budget,
      envs: new Set(s.items.map((it) => it.sha256)).size,
      episodesPerSec: rate,
      etaSec: l && rate ? (total - done) / rate : null,
    };
  }
}
