import { errorMessage } from '../api/errorMessage';
import { DomainError } from '../errors';
import type { Db } from '../memory/db';
import { sweepKindInfo, type SweepKindInfo } from './kinds';
import { SweepCancelled, type SweepProgress } from './sweep';
import { getSweep, setSweepState, sweepCounts, type SweepRow } from './sweepStore';
import { describeOwner, otherOwner, refuseIfOwned } from './sweepOwner';

/** A sweep this process is driving. */
export interface LiveSweep {
  abort: AbortController;
  progress: SweepProgress | null;
  /** Failures among the results that had arrived before this run (the sweep counts this run's). */
  failedBefore: number;
  done: Promise<void>;
}

/** What differs between the app's pool audits and its regret sweeps. */
export interface BackgroundSweepKind<V> {
  /** The kind (its name, its label, which results fail: what the counts read while it does not run here). */
  info: SweepKindInfo;
  /** Drives the sweep to its end; throws SweepCancelled when the signal stopped it. */
  run(sweep: SweepRow, signal: AbortSignal, onProgress: (p: SweepProgress) => void, onSubmitted: (handle: unknown) => void): Promise<unknown>;
  /** Stops the Ray job or Slurm array of a sweep left running by a workbench that stopped; what each engine answered. */
  stopInterrupted(sweep: SweepRow): Promise<string[]>;
  view(s: SweepRow, live: LiveView, message: string | null): V;
  emit(view: V): void;
}

/** The part of a sweep's view every kind shows the same way. */
export interface LiveView {
  /** elsewhere: another live process (the CLI on the same memory file) drives it; interrupted: no process does. */
  state: SweepRow['state'] | 'interrupted' | 'elsewhere';
  phase: 'submitting' | 'following' | null;
  done: number;
  failed: number;
  progress: SweepProgress | null;
  /** This process drives the sweep now. */
  running: boolean;
}

/**
 * Sweeps started from the app, run in the background with their progress as events (at most four a
 * second), cancellable (their work on the engine stopped, what arrived kept) and resumable; one left
 * 'running' by a workbench that stopped is shown as interrupted. Pool audits and regret sweeps each
 * hold one, with their own BackgroundSweepKind.
 */
export class BackgroundSweeps<V> {
  private readonly live = new Map<string, LiveSweep>();
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly k: BackgroundSweepKind<V>,
    private readonly log?: (level: 'info' | 'warn' | 'error', message: string) => void,
  ) {}

  private counts(id: string): { done: number; failed: number } {
    return sweepCounts(this.db, id, this.k.info);
  }

  find(id: string): SweepRow {
    const sweep = getSweep(this.db, id);
    if (!sweep || sweep.kind !== this.k.info.kind) throw new DomainError('not_found', `No ${this.k.info.label} ${id}${sweep ? ` (that is ${sweepKindInfo(sweep.kind)?.article ?? `a ${sweep.kind}`} sweep)` : ''}`);
    return sweep;
  }

  isLive(id: string): boolean {
    return this.live.has(id);
  }

  busy(): number {
    return this.live.size;
  }

  view(s: SweepRow, message: string | null = null, progress?: SweepProgress | null): V {
    const l = this.live.get(s.id);
    const p = progress ?? l?.progress ?? null;
    const elsewhere = s.state === 'running' && !l ? otherOwner(s) : null;
    // While it runs, its own counts (reading a large sweep's results four times a second would cost more than the work).
    const { done, failed } = l && p ? { done: p.done, failed: l.failedBefore + p.failed } : this.counts(s.id);
    return this.k.view(
      s,
      {
        state: s.state === 'running' && !l ? (elsewhere ? 'elsewhere' : 'interrupted') : s.state,
        phase: l && p && (p.phase === 'submitting' || p.phase === 'following') ? p.phase : null,
        done,
        failed,
        progress: p,
        running: !!l,
      },
      message ?? (elsewhere ? `Running in ${describeOwner(elsewhere)} (the command line, or another workbench on this memory file); its results show here as they arrive` : s.state === 'running' ? null : s.message),
    );
  }

  resume(id: string): V {
    const sweep = this.find(id);
    if (this.live.has(id)) return this.view(sweep);
    const Label = `${this.k.info.label[0]!.toUpperCase()}${this.k.info.label.slice(1)}`;
    if (sweep.state === 'done') throw new DomainError('conflict', `${Label} ${id} is finished`);
    // Two drivers would submit its work twice and count what arrives twice over.
    refuseIfOwned(this.db, id, Label);
    setSweepState(this.db, id, 'running');
    return this.drive(getSweep(this.db, id)!);
  }

  /** Stops the sweep's work (here, or its Ray job or Slurm array); what arrived stays. */
  async cancel(id: string): Promise<{ cancelled: boolean; stopped: string[] }> {
    const sweep = this.find(id);
    const l = this.live.get(id);
    if (l) {
      l.abort.abort();
      await l.done;
      return { cancelled: getSweep(this.db, id)!.state === 'cancelled', stopped: [] };
    }
    if (sweep.state !== 'running') return { cancelled: false, stopped: [] };
    // Its driver would carry on under a 'cancelled' row: it is stopped where it runs (Ctrl-C there).
    const owner = otherOwner(sweep);
    if (owner) throw new DomainError('conflict', `${this.k.info.label} ${id} is running in ${describeOwner(owner)}; stop it there`);
    // Interrupted: nothing follows it here, but its Ray job or Slurm array may still run.
    const stopped = await this.k.stopInterrupted(sweep);
    setSweepState(this.db, id, 'cancelled', stopped.join('; ') || null);
    this.k.emit(this.view(getSweep(this.db, id)!));
    return { cancelled: true, stopped };
  }

  /** Cancels what runs, as Ctrl-C does to the CLI (resumable), and waits for each to end. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.live.values()];
    for (const l of all) l.abort.abort();
    await Promise.all(all.map((l) => l.done));
  }

  drive(sweep: SweepRow): V {
    if (this.closed) throw new DomainError('unavailable', 'The workbench is shutting down');
    const abort = new AbortController();
    const l: LiveSweep = { abort, progress: null, failedBefore: this.counts(sweep.id).failed, done: Promise.resolve() };
    this.live.set(sweep.id, l);
    let last = 0;
    const onProgress = (p: SweepProgress): void => {
      l.progress = p;
      // The end (done, cancelled) goes out from finish(), once the sweep no longer runs here.
      if (p.phase === 'done' || p.phase === 'cancelled') return;
      if (p.phase === 'submitting' || Date.now() - last >= 250) {
        last = Date.now();
        this.k.emit(this.view(getSweep(this.db, sweep.id)!));
      }
    };
    const onSubmitted = (h: unknown): void => this.log?.('info', `${this.k.info.label} ${sweep.id} on ${sweep.target}: submitted ${JSON.stringify(h)}`);
    l.done = this.k.run(sweep, abort.signal, onProgress, onSubmitted).then(
      () => this.finish(sweep.id, null),
      // What a cluster answered to the stop is worth showing; this machine's work just ends.
      // Another process took it first (a race with resume's check): its sweep is not failed.
      (e: unknown) => this.finish(sweep.id, e instanceof SweepCancelled ? (sweep.target === 'local' ? null : e.stopped.join('; ') || null) : errorMessage(e), !(e instanceof SweepCancelled) && !(e instanceof DomainError && e.code === 'conflict')),
    );
    return this.view(getSweep(this.db, sweep.id)!);
  }

  private finish(id: string, message: string | null, failed = false): void {
    const l = this.live.get(id);
    this.live.delete(id);
    const s = getSweep(this.db, id);
    if (!s) return;
    // Failed before the sweep could mark it (a lost version, an engine refusing the submission).
    if (failed && s.state === 'running') setSweepState(this.db, id, 'failed', message);
    if (failed) this.log?.('error', `${this.k.info.label} ${id} on ${s.target}: ${message ?? 'failed'}`);
    this.k.emit(this.view(getSweep(this.db, id)!, message, l?.progress ?? null));
  }
}
