import { search } from '../memory/repository';
import type { Db } from '../memory/db';
import { headHashes, targetsFor } from './auditStore';
import { buildReport, type AuditReport } from './report';
import { toolInfo } from './runner';
import type { AuditOptions } from './types';
import type { SweepProgress } from '../sweeps/sweep';
import { asOwner } from '../sweeps/sweepOwner';
import { createSweep, unfinishedSweep, versionSources, sweepIdent, type SweepItem, type SweepRow } from '../sweeps/sweepStore';
import { targetLabel, type DispatchSettings, type SweepTarget } from '../sweeps/targets';
import { auditSweeps, checkSetKey, itemKey, makeExecutor, runSweep } from './sweepKind';

/**
 * A pool audit as both the CLI (`audit --pool`) and the app's API start, follow, resume and cancel
 * it: what they share beyond reading their arguments, so that the two say the same thing.
 */

/** What a sweep keeps of how it was started, so that a resume or a cancel reaches the same place. */
export interface StoredSweepOptions {
  audit: AuditOptions;
  dispatch: DispatchSettings;
  target: SweepTarget;
}

export interface PreparedSweep {
  sweep: SweepRow;
  stored: StoredSweepOptions;
  /** An unfinished sweep of the same query, checks, versions and target was found and is resumed. */
  resumed: boolean;
}

/** The library's environments matching `query` (the Library's search syntax): one item per head version and check set. */
export function poolItems(db: Db, query: string, audit: AuditOptions): SweepItem[] {
  const rows = search(db, { query, limit: 1_000_000, filters: {} }).rows;
  const envIds = rows.map((r) => r.id).sort((a, b) => a - b);
  const set = checkSetKey(audit);
  const seenKeys = new Set<string>();
  const items: SweepItem[] = [];
  for (const t of targetsFor(db, headHashes(db, envIds))) {
    const key = itemKey(t.hash, set);
    if (seenKeys.has(key)) continue; // two environments at one version: one audit
    seenKeys.add(key);
    items.push({ key, file: `memory:${t.envId}`, sha256: t.hash, name: t.name, hint: t.hint });
  }
  return items;
}

/** The pool's items as a new sweep, or the unfinished one of the same command (query, checks, versions, target). */
export function preparePoolSweep(db: Db, query: string, fresh: StoredSweepOptions, items: SweepItem[] = poolItems(db, query, fresh.audit)): PreparedSweep {
  const ident = sweepIdent(targetLabel(fresh.target), query, checkSetKey(fresh.audit), items.map((i) => i.key));
  const again = unfinishedSweep(db, ident);
  if (again) return { sweep: again, stored: storedOptions(again), resumed: true };
  return { sweep: createSweep(db, { kind: auditSweeps.kind, ident, target: targetLabel(fresh.target), query, options: fresh, items }), stored: fresh, resumed: false };
}

export function storedOptions(sweep: SweepRow): StoredSweepOptions {
  return sweep.options as unknown as StoredSweepOptions;
}

export interface DriveOptions {
  signal: AbortSignal;
  onProgress?: ((p: SweepProgress) => void) | undefined;
  onSubmitted?: ((handle: Record<string, unknown>) => void) | undefined;
}

/** Runs (or resumes) a sweep to its end on the target it was started on, and builds its report. */
export async function drivePoolSweep(db: Db, dataDir: string, sweep: SweepRow, o: DriveOptions): Promise<AuditReport> {
  // One driver at a time, this process or another on the same memory file (the app and the CLI).
  return asOwner(db, sweep.id, 'Audit sweep', () => drive(db, dataDir, sweep, o));
}

async function drive(db: Db, dataDir: string, sweep: SweepRow, o: DriveOptions): Promise<AuditReport> {
  const stored = storedOptions(sweep);
  const executor = makeExecutor(stored.target, stored.dispatch, db, dataDir);
  try {
    const sources = versionSources(db, sweep.items.map((it) => it.sha256));
    const lost = sweep.items.find((it) => !sources.has(it.sha256));
    if (lost) throw new Error(`Version ${lost.sha256.slice(0, 12)} of ${lost.name} is no longer in the library`);
    const envs = await runSweep({
      db,
      sweep,
      sources,
      executor,
      options: stored.audit,
      saveAudits: !stored.audit.checks,
      signal: o.signal,
      ...(o.onProgress ? { onProgress: o.onProgress } : {}),
      ...(o.onSubmitted ? { onSubmitted: o.onSubmitted } : {}),
    });
    return buildReport({ ...toolInfo(stored.audit, stored.dispatch.workers, 'cpython'), on: sweep.target, sweep: sweep.id }, envs);
  } finally {
    await executor.close();
  }
}

/** Stops what a sweep submitted on its engine (nothing to stop for local work of another process); says what the engine answered. */
export async function stopPoolSweep(db: Db, dataDir: string, sweep: SweepRow): Promise<string[]> {
  const stored = storedOptions(sweep);
  const executor = makeExecutor(stored.target, stored.dispatch, db, dataDir);
  try {
    const answers: string[] = [];
    for (const h of sweep.remote) answers.push(await executor.stop(h).catch((e: unknown) => `could not stop it: ${(e as Error).message}`));
    return answers;
  } finally {
    await executor.close();
  }
}
