import type { Db } from '../../memory/db';
import { appVersion } from '../../base/appInfo';
import { reportEnv, type ReportEnv } from '../report';
import { saveAudit } from '../store';
import { verdictOf, type AuditOptions, type EnvAudit } from '../types';
import type { OnResult, SweepExecutor, SweepWork } from './executor';
import { auditWork } from './remote';
import { addRemote, addResult, getSweep, setSweepState, sweepResults, type SweepItem, type SweepRow } from './sweepStore';

export interface SweepProgress {
  sweepId: string;
  done: number;
  total: number;
  failed: number;
  /** Results that arrived a second time and were not counted. */
  repeats: number;
  envsPerSec: number | null;
  phase: 'following' | 'submitting' | 'done' | 'cancelled';
}

/** What every kind of sweep is driven with. */
export interface DriveSweepOptions<R> {
  db: Db;
  sweep: SweepRow;
  /** Each environment version's source (the items carry only their hashes). */
  sources: ReadonlyMap<string, string>;
  executor: SweepExecutor<R>;
  work: SweepWork<R>;
  /**
   * Takes a result that is new to the sweep (one at a time, in arrival order): what to keep of it
   * and whether it counts as failing, or null when the item must run again.
   */
  accept(item: SweepItem, result: R, node: string | null): Promise<{ keep: unknown; failing: boolean } | null> | { keep: unknown; failing: boolean } | null;
  onProgress?: (p: SweepProgress) => void;
  /** A submission is recorded and running on the engine (what a person would look for there). */
  onSubmitted?: (handle: Record<string, unknown>) => void;
  signal?: AbortSignal;
  /** Submissions after the first, for items whose result never came (a lost task). */
  maxAttempts?: number;
}

export interface RunSweepOptions extends Omit<DriveSweepOptions<EnvAudit>, 'work' | 'accept'> {
  options: AuditOptions;
  /** Keep each result as the version's stored audit too (full check sets only, as `audit --all` does). */
  saveAudits: boolean;
}

export class SweepCancelled extends Error {
  constructor(readonly sweepId: string, readonly stopped: string[]) {
    super(`Sweep ${sweepId} was cancelled${stopped.length ? `: ${stopped.join('; ')}` : ''}`);
  }
}

/** A pool audit's sweep: each result is an environment's audit, failing when a check fails. */
export async function runSweep(o: RunSweepOptions): Promise<ReportEnv[]> {
  const { db, sweep, executor, options } = o;
  const results = await driveSweep<EnvAudit>({
    ...o,
    work: auditWork(options),
    accept: (it, audit) => {
      if (o.saveAudits) saveAudit(db, it.sha256, audit, { batchId: null, options: { ...options, runtime: 'cpython', sweep: sweep.id, on: executor.label }, toolVersion: appVersion() });
      return { keep: audit, failing: verdictOf(audit.checks) === 'fail' };
    },
  });
  return sweep.items.map((it) => reportEnv(it.file, it.sha256, it.name, results.get(it.key) as EnvAudit));
}

/**
 * Drives a sweep to its end: follows what earlier runs of it submitted (a resume), then submits
 * what still has no result and follows that, storing each result as it arrives. Nothing is lost
 * (a result is kept the moment it lands) and nothing counts twice (one row per item key).
 */
export async function driveSweep<R>(o: DriveSweepOptions<R>): Promise<Map<string, unknown>> {
  const { db, sweep, executor, work } = o;
  const signal = o.signal ?? new AbortController().signal;
  const byKey = new Map(sweep.items.map((it) => [it.key, it]));
  const seen = new Set(sweepResults(db, sweep.id).keys());
  const startedWith = seen.size;
  const started = Date.now();
  let failed = 0;
  let repeats = 0;
  let lastEmit = 0;
  const emit = (phase: SweepProgress['phase'], force = false) => {
    if (!o.onProgress || (!force && Date.now() - lastEmit < 500)) return;
    lastEmit = Date.now();
    const secs = (Date.now() - started) / 1000;
    o.onProgress({ sweepId: sweep.id, done: seen.size, total: byKey.size, failed, repeats, envsPerSec: seen.size > startedWith && secs > 0 ? (seen.size - startedWith) / secs : null, phase });
  };
  const take = async (key: string, result: R | null, node: string | null): Promise<void> => {
    const it = byKey.get(key);
    if (!it || !result) return;
    // Seen already (a log read again after a reconnect, a task run twice): counted once.
    if (seen.has(key)) {
      repeats++;
      return;
    }
    const kept = await o.accept(it, result, node);
    if (!kept) return;
    if (!addResult(db, sweep.id, key, kept.keep, node)) {
      repeats++;
      return;
    }
    seen.add(key);
    if (kept.failing) failed++;
    emit('following', seen.size === byKey.size);
  };
  // One result at a time, in the order they arrive (accepting one may record an episode).
  let queue: Promise<void> = Promise.resolve();
  const onResult: OnResult<R> = (key, result, node) => (queue = queue.then(() => take(key, result, node)));
  const stopAll = async (): Promise<string[]> => {
    const out: string[] = [];
    for (const h of getSweep(db, sweep.id)?.remote ?? []) out.push(await executor.stop(h).catch((e: unknown) => `could not stop ${JSON.stringify(h)}: ${String(e)}`));
    return out;
  };
  const cancelled = async (): Promise<never> => {
    const stopped = await stopAll();
    setSweepState(db, sweep.id, 'cancelled', stopped.join('; ') || null);
    emit('cancelled', true);
    throw new SweepCancelled(sweep.id, stopped);
  };
  emit('following', true);
  // What earlier runs submitted may still be running (or have finished while no one watched).
  for (const h of sweep.remote) {
    if (seen.size === byKey.size) break;
    await executor.follow(h, work, onResult, signal);
    await queue;
    if (signal.aborted) return cancelled();
  }
  const attempts = o.maxAttempts ?? 3;
  for (let attempt = sweep.remote.length; seen.size < byKey.size && attempt < sweep.remote.length + attempts; attempt++) {
    if (signal.aborted) return cancelled();
    const todo = sweep.items.filter((it) => !seen.has(it.key));
    emit('submitting', true);
    const handle = await executor.submit(sweep.id, attempt, todo, o.sources, work);
    // Recorded before it is followed: a workbench killed from here on finds it again.
    addRemote(db, sweep.id, handle);
    o.onSubmitted?.(handle);
    await executor.follow(handle, work, onResult, signal);
    await queue;
    if (signal.aborted) return cancelled();
  }
  if (seen.size < byKey.size) {
    const why = `Sweep ${sweep.id}: ${byKey.size - seen.size} environment(s) got no result after ${attempts} submission(s) on ${executor.label}; run the command again to retry them${executor.lastError ? ` (last error: ${executor.lastError})` : ''}`;
    setSweepState(db, sweep.id, 'failed', why);
    throw new Error(why);
  }
  setSweepState(db, sweep.id, 'done');
  emit('done', true);
  return sweepResults(db, sweep.id);
}
