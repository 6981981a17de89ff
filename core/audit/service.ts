import { randomUUID } from 'node:crypto';
import type { Db } from '../memory/db';
import type { EventBus } from '../server/events';
import { appVersion } from '../services/appInfo';
import type { PyodidePool } from '../runtime/pyodidePool';
import { AuditPool } from './pool';
import { auditIn, PyodideAuditRunner, type AuditRuntime } from './pyodideRunner';
import { createBatch, getAudit, getBatch, headHashes, remainingInBatch, saveAudit, targetsFor, updateBatch, type StoredAudit } from './store';
import { verdictOf, type AuditOptions, type EnvAudit } from './types';
import { errorMessage } from '../api';

export interface AuditServiceOptions {
  db: Db;
  events: EventBus;
  maxTurns: () => number;
  workers?: number;
  /** Where audits run: the Pyodide sandbox (games that need numpy still go native) or native CPython. */
  runtime?: () => AuditRuntime;
  /** Whether native audits may run where no OS sandbox is available (the user's setting). */
  allowUnsandboxed?: () => boolean;
  /**
   * Makes the interpreters for sandboxed audits (needed for runtime 'pyodide'). Not the sessions'
   * pool: an audit that hangs in C code or outgrows memory gets its interpreter killed, which must
   * not take a researcher's open episode with it. The service starts one when audits need it and
   * shuts it down after `sandboxIdleMs` without audits (and on close).
   */
  makePyodide?: () => PyodidePool;
  /** Idle time before the sandbox interpreters are shut down (default 5 minutes). */
  sandboxIdleMs?: number;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

interface Running {
  cancelled: boolean;
  done: Promise<void>;
}

/** Runs audits on a lazily started pool, stores them per version, and drives resumable batches. */
export class AuditService {
  private pool?: AuditPool;
  private readonly running = new Map<string, Running>();

  constructor(private readonly o: AuditServiceOptions) {}

  private sandboxed?: PyodideAuditRunner;
  private sandboxPool?: PyodidePool;
  private sandboxIdle?: NodeJS.Timeout;
  private auditsInFlight = 0;

  /** The sandbox interpreters, made on demand (the pool spawns its children on first use). */
  private sandboxNow(): PyodidePool {
    this.sandboxPool ??= this.o.makePyodide!();
    return this.sandboxPool;
  }

  /** Whether sandbox interpreters exist now (status, tests). */
  sandboxUp(): boolean {
    return this.sandboxPool?.isStarted ?? false;
  }

  private getPool(): AuditPool {
    this.pool ??= new AuditPool({ ...(this.o.workers ? { workers: this.o.workers } : {}), ...(this.o.allowUnsandboxed ? { allowUnsandboxed: this.o.allowUnsandboxed } : {}) });
    return this.pool;
  }

  /** How many audits to keep in flight: enough for every worker of the runtime in use. */
  private workers(): number {
    return this.o.runtime?.() === 'pyodide' && this.o.makePyodide ? this.sandboxNow().size : this.getPool().workers;
  }

  private async auditWhere(source: string, options: AuditOptions): ReturnType<typeof auditIn> {
    const sandbox = this.o.makePyodide ? () => (this.sandboxed ??= new PyodideAuditRunner(() => this.sandboxNow(), 120_000)) : undefined;
    this.auditsInFlight++;
    clearTimeout(this.sandboxIdle);
    try {
      return await auditIn(this.o.runtime?.() ?? 'cpython', { native: () => this.getPool(), sandbox }, source, options);
    } finally {
      if (--this.auditsInFlight === 0 && this.sandboxPool) {
        // Interpreters hold a few hundred MB; an app that audited once should not keep them all day.
        this.sandboxIdle = setTimeout(() => {
          if (this.auditsInFlight > 0 || !this.sandboxPool) return;
          const idle = this.sandboxPool;
          this.sandboxPool = undefined;
          void idle.shutdown();
        }, this.o.sandboxIdleMs ?? 5 * 60_000);
        this.sandboxIdle.unref();
      }
    }
  }

  /**
   * An audit of a source that is not stored (the editor's loading check), where the app audits:
   * `unavailable` says why it could not run at all (native CPython refused without its sandbox).
   */
  async checkSource(source: string, checks: string[]): Promise<{ audit: EnvAudit; runtime: AuditRuntime; unavailable: string | null }> {
    const r = await this.auditWhere(source, { ...this.options({ checks }), hint: null });
    return { audit: r.audit, runtime: r.runtime, unavailable: r.runtime === 'cpython' ? this.getPool().unavailable() : null };
  }

  busy(): number {
    return this.running.size;
  }

  private options(extra: { checks?: string[] | undefined; callTimeoutSec?: number | undefined }): AuditOptions {
    return { maxTurns: this.o.maxTurns(), ...(extra.checks?.length ? { checks: extra.checks } : {}), ...(extra.callTimeoutSec ? { callTimeoutSec: extra.callTimeoutSec } : {}) };
  }

  async runOne(hash: string, extra: { checks?: string[] | undefined; callTimeoutSec?: number | undefined } = {}): Promise<StoredAudit | null> {
    const [t] = targetsFor(this.o.db, [hash]);
    if (!t) return null;
    const opts = this.options(extra);
    const r = await this.auditWhere(t.source, { ...opts, hint: t.hint });
    return saveAudit(this.o.db, hash, r.audit, { options: { ...opts, runtime: r.runtime, ...(r.why ? { nativeBecause: r.why } : {}) }, toolVersion: appVersion() });
  }

  results(hash: string): StoredAudit | null {
    return getAudit(this.o.db, hash);
  }

  startBatch(sel: { envIds?: number[] | undefined; all?: boolean | undefined }, extra: { checks?: string[] | undefined; callTimeoutSec?: number | undefined }): { batchId: string; total: number } {
    const hashes = [...new Set(sel.all || !sel.envIds ? headHashes(this.o.db) : headHashes(this.o.db, sel.envIds))];
    const batchId = randomUUID();
    const opts = this.options(extra);
    createBatch(this.o.db, batchId, hashes, opts);
    this.drive(batchId, hashes, hashes.length, 0, opts);
    return { batchId, total: hashes.length };
  }

  resume(batchId: string): { batchId: string; total: number; remaining: number } | null {
    const b = getBatch(this.o.db, batchId);
    if (!b) return null;
    if (this.running.has(batchId)) return { batchId, total: b.total, remaining: b.total - b.done };
    const left = remainingInBatch(this.o.db, b);
    updateBatch(this.o.db, batchId, { state: 'running', done: b.total - left.length });
    this.drive(batchId, left, b.total, b.total - left.length, b.options as AuditOptions);
    return { batchId, total: b.total, remaining: left.length };
  }

  cancel(batchId: string): boolean {
    const r = this.running.get(batchId);
    if (!r) return false;
    r.cancelled = true;
    return true;
  }

  /** Waits for a batch to stop (tests, shutdown). */
  async settle(batchId: string): Promise<void> {
    await this.running.get(batchId)?.done;
  }

  private drive(batchId: string, hashes: string[], total: number, already: number, opts: AuditOptions): void {
    const state: Running = { cancelled: false, done: Promise.resolve() };
    this.running.set(batchId, state);
    const started = Date.now();
    let done = already;
    let failed = 0;
    let next = 0;
    let lastEmit = 0;
    const emit = (st: 'running' | 'cancelled' | 'done' | 'failed', lastHash: string | null, message?: string) => {
      const rate = (done - already) / Math.max(0.001, (Date.now() - started) / 1000);
      this.o.events.emit('audit.progress', { batchId, state: st, done, total, failed, etaSec: done > already && rate > 0 ? (total - done) / rate : null, lastHash, ...(message ? { message } : {}) });
    };
    // A window of work twice the pool size keeps every worker busy while cancel stays prompt.
    const window = this.workers() * 2;
    const worker = async () => {
      while (!state.cancelled && next < hashes.length) {
        const hash = hashes[next++]!;
        const [t] = targetsFor(this.o.db, [hash]);
        if (!t) {
          done++;
          continue;
        }
        const r = await this.auditWhere(t.source, { ...opts, hint: t.hint });
        const a = r.audit;
        saveAudit(this.o.db, hash, a, { batchId, options: { ...opts, runtime: r.runtime, ...(r.why ? { nativeBecause: r.why } : {}) }, toolVersion: appVersion() });
        done++;
        if (verdictOf(a.checks) === 'fail') failed++;
        if (Date.now() - lastEmit > 200 || done === total) {
          lastEmit = Date.now();
          updateBatch(this.o.db, batchId, { done });
          emit('running', hash);
        }
      }
    };
    state.done = Promise.all(Array.from({ length: window }, worker))
      .then(() => {
        const final = state.cancelled && done < total ? 'cancelled' : 'done';
        updateBatch(this.o.db, batchId, { state: final, done });
        emit(final, null);
      })
      .catch((e: unknown) => {
        const msg = errorMessage(e);
        this.o.log?.('error', `audit batch ${batchId} failed: ${msg}`);
        updateBatch(this.o.db, batchId, { state: 'failed', done });
        emit('failed', null, msg);
      })
      .finally(() => this.running.delete(batchId));
  }

  async close(): Promise<void> {
    for (const r of this.running.values()) r.cancelled = true;
    await this.pool?.close();
    clearTimeout(this.sandboxIdle);
    await this.sandboxPool?.shutdown();
    this.sandboxPool = undefined;
  }
}
