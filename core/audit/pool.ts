import { cpus } from 'node:os';
import { Slots } from '../base/slots';
import type { SandboxViolation } from '../runtime/supervisor';
import { NativeRuntime } from '../runtime/native';
import type { HarnessReply } from '../runtime/types';
import { ALL_CHECKS, SANDBOX_CHECK, SPADE_CHECKS, checkSelected, type AuditOptions, type CheckResult, type EnvAudit } from './types';
import { stampEvidence } from './evidence';
import type { RuntimeKind } from '../api/schemas';

/**
 * Whole audits in native CPython, each environment in a process of its own: forked from the
 * native fork server (inside bubblewrap) for this one audit and killed after it, so nothing one
 * environment does to its interpreter reaches the next. The checks play every episode inside that
 * process (one round trip per environment); a process that dies or stops answering fails the
 * check it was running, and what the sandbox refused is judged here, outside it (`sandbox`).
 */
export interface PoolOptions {
  workers?: number;
  memoryMb?: number;
  /** Wall-clock limit for one whole audit, for hangs the in-process timer cannot interrupt (C code). */
  envTimeoutSec?: number;
  /** Whether native runs may go ahead without an OS sandbox (the user's setting). */
  allowUnsandboxed?: () => boolean;
  /** Off only in the security tests that show the OS walls hold without the in-process guard. */
  auditHook?: boolean;
  /** Off only to compare with audits forked by the fork server itself (NativeOptions.auditZygote). */
  auditZygote?: boolean;
}

/**
 * The results the judge decided before the interpreter died (its crash reply natively, streamed
 * lines in Pyodide), by check id: only well-formed ones, each check once.
 */
export function decidedResults(results: unknown): Map<string, CheckResult> {
  const out = new Map<string, CheckResult>();
  if (!Array.isArray(results)) return out;
  for (const r of results.slice(0, 100) as Partial<CheckResult>[]) {
    if (!r || typeof r !== 'object' || typeof r.id !== 'string' || !(ALL_CHECKS as readonly string[]).includes(r.id) || r.id === SANDBOX_CHECK) continue;
    if (!['pass', 'warn', 'fail', 'skip'].includes(r.status as string) || typeof r.message !== 'string') continue;
    const evidence = r.evidence && typeof r.evidence === 'object' && !Array.isArray(r.evidence) ? r.evidence : {};
    out.set(r.id, { id: r.id, status: r.status!, message: r.message, evidence });
  }
  return out;
}

/**
 * The audit of an environment whose interpreter died or hung beyond reach: the check running then
 * fails; the checks decided before keep their results (`results`, as the judge sent them).
 */
export function deadAudit(options: AuditOptions, phase: string, reason: string, stderrTail: string, elapsedMs: number, timedOut: boolean, results?: unknown): EnvAudit {
  const checks: CheckResult[] = [];
  const spadeIdx = (SPADE_CHECKS as readonly string[]).indexOf(phase);
  const decided = decidedResults(results);
  for (const id of ALL_CHECKS) {
    if (id === SANDBOX_CHECK || !checkSelected(id, options.checks)) continue;
    const known = decided.get(id);
    if (known && (id !== phase || known.status === 'fail')) {
      checks.push(known);
      continue;
    }
    if (id.startsWith('tool.')) continue;
    const before = spadeIdx >= 0 ? (SPADE_CHECKS as readonly string[]).indexOf(id) >= 0 && (SPADE_CHECKS as readonly string[]).indexOf(id) < spadeIdx : false;
    if (id === phase) checks.push({ id, status: 'fail', message: `${timedOut ? 'Hung' : 'Crashed'} during this check: ${reason}`, evidence: { observed: reason, ...(stderrTail ? { stderr: stderrTail.slice(-1000) } : {}) } });
    else if (id === 'timing' && timedOut) checks.push({ id, status: 'fail', message: `A call did not return during ${phase}; the process was killed`, evidence: { call: phase, observed: reason } });
    else if (before) checks.push({ id, status: 'pass', message: 'Passed before the interpreter died', evidence: {} });
    else checks.push({ id, status: 'skip', message: `Not run: the interpreter died during ${phase}`, evidence: {} });
  }
  return { className: null, toolUse: false, checks, elapsedMs };
}

/**
 * The `sandbox` check, decided by the host from what the sandbox reported while the environment
 * ran: an environment that tried to reach files, processes, sockets or native code fails, even
 * though every attempt was refused.
 */
export function sandboxCheck(violations: readonly SandboxViolation[]): CheckResult {
  if (!violations.length) return { id: SANDBOX_CHECK, status: 'pass', message: 'No attempt to leave the sandbox', evidence: {} };
  const kinds = [...new Set(violations.map((v) => v.event))];
  return {
    id: SANDBOX_CHECK,
    status: 'fail',
    message: `Tried ${violations.length} forbidden operation${violations.length === 1 ? '' : 's'} (${kinds.slice(0, 5).join(', ')}); the sandbox refused ${violations.length === 1 ? 'it' : 'them'}`,
    evidence: { attempts: violations.slice(0, 50) },
  };
}

/** Adds the host-side checks to an audit that came back from an interpreter, and to its evidence where it ran. */
export function withHostChecks(a: EnvAudit, violations: readonly SandboxViolation[], options: AuditOptions, runtime: RuntimeKind): EnvAudit {
  const stamped = stampEvidence(a, runtime, options);
  if (!checkSelected(SANDBOX_CHECK, options.checks)) return stamped;
  return { ...stamped, checks: [...stamped.checks.filter((c) => c.id !== SANDBOX_CHECK), sandboxCheck(violations)] };
}

/** What the session of one audit showed besides its reply (a shard runner on a cluster sends the same). */
export interface AuditSessionTrace {
  violations: readonly SandboxViolation[];
  /** The last check the audit announced. */
  phase: string;
  stderrTail: string;
}

/**
 * The audit an interpreter's reply makes, with the host-side checks: the one place a native audit's
 * reply becomes a verdict, for the local pool and for shards run on Ray or Slurm alike.
 */
export function finishAudit(r: HarnessReply, s: AuditSessionTrace, options: AuditOptions, elapsedMs: number): EnvAudit {
  if (r.ok) return withHostChecks(r.result as EnvAudit, s.violations, options, 'cpython');
  // The judge names the check the game's process died in; the host's last-heard phase is for deaths
  // the judge did not see (the whole audit killed at its limit).
  const phase = (typeof r.error.phase === 'string' && r.error.phase) || s.phase || 'spade.exec';
  return withHostChecks(deadAudit(options, phase, r.error.message, s.stderrTail.trim(), elapsedMs, r.error.kind === 'timeout', r.error.results), s.violations, options, 'cpython');
}

/** What a caller of one audit can do while it runs: hear which check starts, and stop it. */
export interface AuditControl {
  onPhase?: (check: string) => void;
  signal?: AbortSignal;
}

/** Thrown (never stored as a verdict) when the user stopped an audit. */
export class AuditCancelled extends Error {
  constructor() {
    super('The audit was cancelled; nothing was stored.');
    this.name = 'AuditCancelled';
  }
}

export class AuditPool {
  private readonly native: NativeRuntime;
  private readonly size: number;
  private readonly envTimeoutMs: number;
  private readonly slots: Slots;
  private closed = false;
  private seq = 0;
  restarts = 0;

  constructor(private readonly opts: PoolOptions = {}) {
    this.size = Math.max(1, opts.workers ?? Math.max(1, cpus().length));
    this.slots = new Slots(this.size);
    this.envTimeoutMs = (opts.envTimeoutSec ?? 120) * 1000;
    this.native = new NativeRuntime({
      timeoutMs: () => this.envTimeoutMs,
      graceMs: 0,
      memoryMb: opts.memoryMb ?? 2048,
      ...(opts.allowUnsandboxed ? { allowUnsandboxed: opts.allowUnsandboxed } : {}),
      ...(opts.auditHook === false ? { auditHook: false } : {}),
      ...(opts.auditZygote === false ? { auditZygote: false } : {}),
    });
  }

  get workers(): number {
    return this.size;
  }

  /** The wall-clock limit of one whole audit, in seconds (shown while it runs). */
  get limitSec(): number {
    return this.envTimeoutMs / 1000;
  }

  /** Why native audits cannot run here (no OS sandbox and not allowed), or null. */
  unavailable(): string | null {
    return this.native.unavailable();
  }

  async audit(source: string, options: AuditOptions = {}, ctl: AuditControl = {}): Promise<EnvAudit> {
    if (this.closed) throw new Error('the audit pool is closed');
    await this.slots.take();
    const started = Date.now();
    try {
      if (this.closed) throw new Error('the audit pool is closed');
      if (ctl.signal?.aborted) throw new AuditCancelled();
      const why = this.native.unavailable();
      if (why) return deadAudit(options, 'spade.exec', why, '', 0, false);
      const s = await this.native.fork(`audit-${++this.seq}`, this.envTimeoutMs / 1000, true, source);
      // Cancel kills this audit's own process; the judge and other audits go on.
      const stop = () => s.fail('cancelled by the user', 'cancelled');
      ctl.signal?.addEventListener('abort', stop, { once: true });
      // A cancel that came while the process was forking has already fired: honour it now.
      if (ctl.signal?.aborted) stop();
      try {
        const r = await s.request({ cmd: 'audit', source, options: { ...options, phases: ctl.onPhase ? true : 'lasting' } }, this.envTimeoutMs, ctl.onPhase);
        if (ctl.signal?.aborted) throw new AuditCancelled();
        // The judge outlives a game process that exits or crashes, and says so ('crashed').
        if (!r.ok && (r.error.restarted || r.error.kind === 'crashed')) this.restarts++;
        return finishAudit(r, s, options, Date.now() - started);
      } finally {
        ctl.signal?.removeEventListener('abort', stop);
        s.close();
      }
    } finally {
      this.slots.give();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.slots.wakeAll();
    await this.native.shutdown();
  }
}
