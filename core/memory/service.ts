/**
 * The memory feature's long-lived part inside Services: import jobs (with progress events and
 * cancel), and the first-start import of the seed pack. Everything else is plain functions in
 * repository.ts over the shared connection.
 */
import { existsSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { errorMessage, type ImportProgress, type ImportSummary } from '../api';
import type { EventBus } from '../server/events';
import type { Db } from './db';
import { importPaths, type WorkerImportOptions } from './importer';
import { markSeedPackImported, seedPackDir, seedPackDue } from './seedPack';
import { DomainError } from '../errors';

interface ImportJob {
  jobId: string;
  progress: ImportProgress;
  cancel(): void;
  done: Promise<ImportSummary | null>;
}

export interface MemoryServiceDeps {
  db: Db;
  dbPath: string;
  events: EventBus;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
  nativeBinding?: string;
  /** Why writes are refused right now (a damaged database file), or null. */
  writesPaused?: () => string | null;
  /** The bundled import worker; found next to the bundle by default (null: import on this thread). */
  workerFile?: string | null;
}

/** The bundled worker, used only when we run from the bundle ourselves (a source run imports in-process). */
function workerFile(): string | null {
  const here = fileURLToPath(import.meta.url);
  if (!/[\\/]dist[\\/]/.test(here)) return null;
  const root = dirname(dirname(here));
  const file = join(root, 'node', 'memory-worker.js');
  return existsSync(file) ? file : null;
}

export class MemoryService {
  private jobs = new Map<string, ImportJob>();
  private closed = false;

  constructor(private deps: MemoryServiceDeps) {}

  busy(): number {
    return [...this.jobs.values()].filter((j) => j.progress.phase !== 'done' && j.progress.phase !== 'failed').length;
  }

  startImport(paths: string[], opts: { jobId?: string; runId?: string; rolloutStep?: number; followLinks?: boolean; regretPlaceholder?: string } = {}): ImportJob {
    if (this.closed) throw new DomainError('unavailable', 'The workbench is shutting down');
    // The worker writes through its own connection, which the pause on ours does not cover.
    const paused = this.deps.writesPaused?.();
    if (paused) throw new DomainError('unavailable', paused, { database: 'writes-paused' });
    const jobId = opts.jobId ?? `import-${randomUUID().slice(0, 8)}`;
    const existing = this.jobs.get(jobId);
    if (existing && existing.progress.phase !== 'done' && existing.progress.phase !== 'failed') {
      throw new DomainError('conflict', `Import ${jobId} is still running`);
    }
    const progress: ImportProgress = { jobId, phase: 'scanning', files: 0, imported: 0, unchanged: 0, updated: 0, skipped: 0 };
    const job: ImportJob = { jobId, progress, cancel: () => {}, done: Promise.resolve(null) };
    let lastChanged = 0;
    let lastEmit = 0;
    const onProgress = (p: Omit<ImportProgress, 'jobId'>) => {
      // The final 'done' goes out below, with the summary attached.
      if (p.phase === 'done') return;
      job.progress = { ...p, jobId };
      this.deps.events.emit('memory.importProgress', job.progress);
      // Lists refresh while a long import runs, but not on every batch.
      if (p.imported + p.updated > lastChanged && Date.now() - lastEmit > 1000) {
        lastChanged = p.imported + p.updated;
        lastEmit = Date.now();
        this.deps.events.emit('memory.changed', { reason: 'import' });
      }
    };
    const importOpts: WorkerImportOptions = {
      ...(this.deps.dbPath === ':memory:' ? {} : { skippedLog: join(dirname(this.deps.dbPath), 'imports', `${jobId}-skipped.jsonl`) }),
      ...(opts.followLinks ? { followLinks: true } : {}),
      ...(opts.runId ? { runId: opts.runId } : {}),
      ...(opts.rolloutStep !== undefined ? { rolloutStep: opts.rolloutStep } : {}),
      ...(opts.jobId ? { jobId: opts.jobId } : {}),
      ...(opts.regretPlaceholder ? { regretPlaceholder: opts.regretPlaceholder } : {}),
    };
    const run = this.runImport(paths, importOpts, onProgress, job);
    job.done = run.then(
      (summary) => {
        job.progress = { ...job.progress, phase: 'done', summary };
        this.deps.events.emit('memory.importProgress', job.progress);
        this.deps.events.emit('memory.changed', { reason: 'import' });
        this.deps.log('info', `import ${jobId}: ${summary.imported} new, ${summary.updated} updated, ${summary.unchanged} unchanged, ${summary.skippedTotal} skipped${summary.cancelled ? ' (cancelled)' : ''}`);
        return summary;
      },
      (e: unknown) => {
        const error = errorMessage(e);
        job.progress = { ...job.progress, phase: 'failed', error };
        this.deps.events.emit('memory.importProgress', job.progress);
        this.deps.log('error', `import ${jobId} failed: ${error}`);
        return null;
      },
    );
    this.jobs.set(jobId, job);
    return job;
  }

  private runImport(
    paths: string[],
    opts: WorkerImportOptions,
    onProgress: (p: Omit<ImportProgress, 'jobId'>) => void,
    job: ImportJob,
  ): Promise<ImportSummary> {
    const file = this.deps.workerFile === undefined ? workerFile() : this.deps.workerFile;
    if (!file || this.deps.dbPath === ':memory:') {
      const controller = new AbortController();
      job.cancel = () => controller.abort();
      return importPaths(this.deps.db, paths, { ...opts, signal: controller.signal, onProgress });
    }
    return new Promise<ImportSummary>((resolveRun, reject) => {
      const worker = new Worker(file, {
        workerData: { dbPath: this.deps.dbPath, paths, opts, ...(this.deps.nativeBinding ? { nativeBinding: this.deps.nativeBinding } : {}) },
      });
      job.cancel = () => worker.postMessage({ type: 'cancel' });
      let settled = false;
      worker.on('message', (m: { type: 'progress'; p: Omit<ImportProgress, 'jobId'> } | { type: 'done'; summary: ImportSummary } | { type: 'error'; message: string }) => {
        if (m.type === 'progress') onProgress(m.p);
        else if (m.type === 'done') ((settled = true), resolveRun(m.summary));
        else ((settled = true), reject(new Error(m.message)));
      });
      worker.on('error', (e) => {
        if (!settled) ((settled = true), reject(e));
      });
      worker.on('exit', (code) => {
        if (!settled) reject(new Error(`import worker exited with code ${code}`));
      });
    });
  }

  status(jobId: string): ImportProgress {
    const job = this.jobs.get(jobId);
    if (!job) throw new DomainError('not_found', `No import ${jobId} in this session`);
    return job.progress;
  }

  cancel(jobId: string): boolean {
    const job = this.jobs.get(jobId);
    if (!job || job.progress.phase === 'done' || job.progress.phase === 'failed') return false;
    job.cancel();
    return true;
  }

  /**
   * A new user should see a real library: on the first start with an empty database the seed
   * pack is imported in the background. Once done it is never imported again, even if the user
   * deletes every environment.
   */
  importSeedPackIfEmpty(seedDir = seedPackDir()): ImportJob | null {
    const db = this.deps.db;
    if (this.deps.writesPaused?.() || !seedPackDue(db, seedDir)) return null;
    const job = this.startImport([seedDir], { jobId: 'seed-pack' });
    void job.done.then((summary) => {
      if (summary && !summary.cancelled && !this.closed) {
        markSeedPackImported(db);
      }
    });
    return job;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const j of this.jobs.values()) j.cancel();
    await Promise.all([...this.jobs.values()].map((j) => j.done));
  }
}
