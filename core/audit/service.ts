import { randomUUID } from 'node:crypto';
import type { Db } from '../memory/db';
import type { EventBus } from '../server/events';
import { appVersion } from '../base/appInfo';
import type { PyodidePool } from '../runtime/pyodidePool';
import { AuditCancelled, AuditPool, type AuditControl } from './pool';
import { DomainError } from '../errors';
import { auditIn, PyodideAuditRunner } from './pyodideRunner';
import type { RuntimeKind } from '../api/schemas';
import { createBatch, envIdsWith, getAudit, getBatch, headHashes, listBatches, poolSummary, remainingInBatch, saveAudit, targetsFor, updateBatch, type StoredAudit } from './auditStore';
import { checkSelected, PLAY_CHECKS, TOOL_CHECKS, verdictOf, type AuditOptions, type EnvAudit } from './types';
import { errorMessage } from '../api';

export interface AuditServiceOptions {
  db: Db;
  events: EventBus;
  maxTurns: () => number;
  workers?: number;
  /** Where audits run: the Pyodide sandbox (games that need numpy still go native) or native CPython. */
  runtime?: () => RuntimeKind;
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

/** The checks that announce themselves as they start (native/audit_checks.py): SPADE's load stages, then the workbench's. */
const PHASED_SPADE = ['spade.exec', 'spade.instantiate', 'spade.reset', 'spade.step', 'spade.reset2', 'spade.admission'];

/** How often a single audit says it is alive while one check runs long (a hang, a slow game). */
const HEARTBEAT_MS = 500;

/** Runs audits on a lazily started pool, stores them per version, and drives resumable batches. */
export class AuditService {
  private pool?: AuditPool;
  private readonly running = new Map<string, Running>();
  /** Single audits started with a runId, by that id: what cancels each. */
  private readonly runs = new Map<string, AbortController>();

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

  private async auditWhere(source: string, options: AuditOptions, ctl: Parameters<typeof auditIn>[4] = {}): ReturnType<typeof auditIn> {
    const sandbox = this.o.makePyodide ? () => (this.sandboxed ??= new PyodideAuditRunner(() => this.sandboxNow(), 120_000)) : undefined;
    this.auditsInFlight++;
    clearTimeout(this.sandboxIdle);
    try {
      return await auditIn(this.o.runtime?.() ?? 'cpython', { native: () => this.getPool(), sandbox }, source, options, ctl);
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
  /** `signal`: Cancel, which stops the checks' interpreter as cancelRun does an audit's. */
  /** `hint`: a hint that is not stored yet (a designed game's, for hint-leak). */
  async checkSource(source: string, checks: string[], signal?: AbortSignal, hint: string | null = null, extra: Pick<AuditOptions, 'maxTurns' | 'admissionAlways' | 'guessLoad' | 'resetGate'> = {}): Promise<{ audit: EnvAudit; runtime: RuntimeKind; unavailable: string | null }> {
    const r = await this.auditWhere(source, { ...this.options({ checks }), hint, ...extra }, signal ? { signal } : {});
    return { audit: r.audit, runtime: r.runtime, unavailable: r.runtime === 'cpython' ? this.getPool().unavailable() : null };
  }

  busy(): number {
    return this.running.size;
  }

  private options(extra: { checks?: string[] | undefined; callTimeoutSec?: number | undefined }): AuditOptions {
    return { maxTurns: this.o.maxTurns(), ...(extra.checks?.length ? { checks: extra.checks } : {}), ...(extra.callTimeoutSec ? { callTimeoutSec: extra.callTimeoutSec } : {}) };
  }

  /**
   * One audit, now. With a `runId` it reports as it goes (audit.runProgress: the sandbox starting,
   * each check as it begins, a heartbeat with the elapsed time against the audit's limit) and
   * `cancelRun(runId)` stops it: its interpreter is killed and nothing is stored.
   */
  async runOne(hash: string, extra: { checks?: string[] | undefined; callTimeoutSec?: number | undefined } = {}, runId?: string): Promise<StoredAudit | null> {
    const [t] = targetsFor(this.o.db, [hash]);
    if (!t) return null;
    const opts = this.options(extra);
    if (!runId) {
      const r = await this.auditWhere(t.source, { ...opts, hint: t.hint });
      const saved = saveAudit(this.o.db, hash, r.audit, { options: { ...opts, runtime: r.runtime, ...(r.why ? { nativeBecause: r.why } : {}) }, toolVersion: appVersion() });
      this.stored(t.envId);
      return saved;
    }
    if (this.runs.has(runId)) throw new DomainError('conflict', `An audit named ${runId} is already running.`);
    const abort = new AbortController();
    this.runs.set(runId, abort);
    const started = Date.now();
    const seen = new Set<string>();
    let check: string | null = null;
    let runtime: RuntimeKind | null = null;
    let limitSec: number | null = null;
    const total = () => {
      const phased = [...PHASED_SPADE, ...PLAY_CHECKS, ...([...seen].some((c) => c.startsWith('tool.')) ? TOOL_CHECKS : [])];
      return Math.max(phased.filter((c) => c.startsWith('spade.') || checkSelected(c, opts.checks)).length, seen.size);
    };
    const emit = (state: 'starting' | 'running' | 'done' | 'cancelled' | 'failed', message?: string) =>
      this.o.events.emit('audit.runProgress', {
        runId,
        hash,
        state,
        runtime,
        check,
        checksDone: state === 'done' ? total() : Math.max(0, seen.size - 1),
        checksTotal: total(),
        elapsedSec: (Date.now() - started) / 1000,
        limitSec,
        ...(message ? { message } : {}),
      });
    // Before the first check the time goes into starting an interpreter (Pyodide's first: seconds).
    const beat = () =>
      check === null
        ? emit('starting', runtime === 'pyodide' && (this.sandboxPool?.coldSince != null || !this.sandboxPool?.isStarted) ? 'Starting the Pyodide sandbox (the first audit after a while waits for it)' : 'Starting the interpreter')
        : emit('running');
    const heartbeat = setInterval(beat, HEARTBEAT_MS);
    heartbeat.unref();
    const ctl: AuditControl & { onRuntime: (r: RuntimeKind, l: number) => void } = {
      signal: abort.signal,
      onPhase: (c) => {
        check = c;
        seen.add(c);
        emit('running');
      },
      onRuntime: (r, l) => {
        runtime = r;
        limitSec = l;
        beat();
      },
    };
    beat();
    try {
      const r = await this.auditWhere(t.source, { ...opts, hint: t.hint }, ctl);
      if (abort.signal.aborted) throw new AuditCancelled();
      const saved = saveAudit(this.o.db, hash, r.audit, { options: { ...opts, runtime: r.runtime, ...(r.why ? { nativeBecause: r.why } : {}) }, toolVersion: appVersion() });
      this.stored(t.envId);
      emit('done');
      return saved;
    } catch (e) {
      if (e instanceof AuditCancelled || abort.signal.aborted) {
        emit('cancelled', 'Cancelled: nothing was stored.');
        throw new DomainError('cancelled', 'The audit was cancelled; nothing was stored.');
      }
      emit('failed', errorMessage(e));
      throw e;
    } finally {
      clearInterval(heartbeat);
      this.runs.delete(runId);
    }
  }

  /** Stops a single audit started with this runId; false when none runs under it. */
  /**
   * A single audit was stored: what shows the pool's counts or an environment's verdict (the Pool
   * audit header, the library's Audit column) reads again, however the audit was asked for.
   */
  private stored(envId: number): void {
    this.o.events.emit('memory.changed', { reason: 'audit', ids: [envId] });
  }

  cancelRun(runId: string): boolean {
    const a = this.runs.get(runId);
    if (!a) return false;
    a.abort();
    return true;
  }

  results(hash: string): StoredAudit | null {
    return getAudit(this.o.db, hash);
  }

  batches(limit: number) {
    return listBatches(this.o.db, limit);
  }

  summary() {
    return poolSummary(this.o.db);
  }

  environmentsWith(checkId: string, status: Parameters<typeof envIdsWith>[2]): number[] {
    return envIdsWith(this.o.db, checkId, status);
  }

  /** Each version's stored verdict and failing checks (null when never audited). */
  verdicts(hashes: string[]) {
    return hashes.map((hash) => {
      const a = getAudit(this.o.db, hash);
      return { hash, verdict: a?.verdict ?? null, failing: a ? a.checks.filter((c) => c.status === 'fail').map((c) => c.id) : [], createdAt: a?.createdAt ?? null };
    });
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
    for (const a of this.runs.values()) a.abort();
    await this.pool?.close();
    clearTimeout(this.sandboxIdle);
    await this.sandboxPool?.shutdown();
    this.sandboxPool = undefined;
  }
}
