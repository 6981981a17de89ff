import { randomUUID } from 'node:crypto';
import { NativeRuntime, probePython, type NativeIsolation, type PythonInfo } from './native';
import { PyodidePool, type Priority, type PoolStatus } from './pyodidePool';
import type { RuntimePaths } from './paths';
import { failure, type HarnessError, type SpadeValidation } from './types';
import { replyOf, type LoadResult, type ReplyOf } from './harnessMessages';

import { chooseRuntime, retryNatively, type RuntimeChoice, type RuntimeKind } from './choice';
import type { WireRequest } from './protocol';
import type { HarnessRequest } from './protocol';

export type { RuntimeChoice, RuntimeKind } from './choice';

export interface OpenOptions {
  source: string;
  runtime?: RuntimeChoice;
  maxTurns?: number;
  /** 'respect' calls Cls() first (SPADE's training plays); 'legacy' calls Cls(max_turns=budget) first. */
  mode?: 'respect' | 'legacy';
  /** Label kept with the session (e.g. the version hash it came from). */
  label?: string;
  /** SPADE mode (the harness's default): load validates the played instance, no per-session seeding. */
  spadeMode?: boolean;
  /** "Workbench determinism": random/numpy seeded at every reset(seed), a private random per session. */
  deterministic?: boolean;
  /** 'background': loaded ahead of its turn, behind every waiting foreground request (Pyodide). */
  priority?: Priority;
  /** Cancel: the load is dropped or its interpreter stopped, and no session is left open. */
  signal?: AbortSignal;
}

/** The harness's load result (./harnessMessages); `validation`: SPADE's load validation of the played instance, with its exact message. */
export type LoadInfo = LoadResult & { validation?: SpadeValidation };

export type OpenResult =
  | { ok: true; sessionId: string; runtime: RuntimeKind; load: LoadInfo; fallbackReason?: string; output?: string }
  | { ok: false; runtime: RuntimeKind; error: HarnessError; fallbackReason?: string; output?: string };

export interface RuntimeServiceOptions {
  settings: () => { stepTimeoutSec: number; maxTurns: number; defaultRuntime: RuntimeKind; allowUnsandboxedNative?: boolean };
  poolSize?: number;
  memoryMb?: number;
  paths?: RuntimePaths;
  /** Sessions idle longer than this are closed (their interpreters' memory matters). */
  idleCloseMs?: number;
  log?: (level: 'info' | 'warn' | 'error', msg: string) => void;
  /** Where the native interpreter probe's answer is kept between processes (see pythonProbeCache). */
  pythonProbeCache?: string;
}

interface SessionRecord {
  id: string;
  runtime: RuntimeKind;
  label?: string;
  lastUsed: number;
}

export { nativeReason, PYODIDE_MISSING_MODULES } from './choice';

/**
 * The engine's one entry to running environment code: sessions on the Pyodide pool (sandboxed,
 * the default) or on native CPython (for numpy and friends; less isolated), one protocol for both.
 */
export class RuntimeService {
  readonly pool: PyodidePool;
  readonly native: NativeRuntime;
  private readonly sessions = new Map<string, SessionRecord>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly opts: RuntimeServiceOptions) {
    const timeoutMs = (): number => opts.settings().stepTimeoutSec * 1000;
    this.pool = new PyodidePool({
      timeoutMs,
      ...(opts.poolSize ? { size: opts.poolSize } : {}),
      ...(opts.memoryMb ? { memoryMb: opts.memoryMb } : {}),
      ...(opts.paths ? { paths: opts.paths } : {}),
      ...(opts.log ? { log: opts.log } : {}),
    });
    this.native = new NativeRuntime({ timeoutMs, allowUnsandboxed: () => opts.settings().allowUnsandboxedNative ?? false, ...(opts.paths ? { paths: opts.paths } : {}), ...(opts.log ? { log: opts.log } : {}), ...(opts.pythonProbeCache ? { pythonProbeCache: opts.pythonProbeCache } : {}) });
    const idle = opts.idleCloseMs ?? 60 * 60 * 1000;
    this.sweeper = setInterval(() => this.sweep(idle), Math.min(idle, 60_000));
    this.sweeper.unref();
  }

  private backend(kind: RuntimeKind): PyodidePool | NativeRuntime {
    return kind === 'pyodide' ? this.pool : this.native;
  }

  async open(o: OpenOptions): Promise<OpenResult> {
    const settings = this.opts.settings();
    const choice = o.runtime ?? 'auto';
    // Probes a prestart began are answered here, not run again (blocking) by the checks below.
    await this.native.probed();
    const loadReq: HarnessRequest = { cmd: 'load', source: o.source, options: { maxTurns: o.maxTurns ?? settings.maxTurns, mode: o.mode ?? 'respect', ...(o.spadeMode === false ? { spadeMode: false } : {}), ...(o.deterministic ? { deterministic: true } : {}) } };
    const nativeUsable = this.native.unavailable() === null;
    const first = chooseRuntime({ choice, source: o.source, preferred: settings.defaultRuntime, nativeUsable });
    let kind = first.kind;
    let fallbackReason = first.why;
    if (kind === 'cpython' && !probePython()) {
      return { ok: false, runtime: 'cpython', error: { kind: 'unavailable', type: 'NoPython', message: 'No native python3 was found (set SPADE_PYTHON)' } };
    }

    let id = `rs-${randomUUID()}`;
    let reply = kind === 'pyodide' ? await this.pool.open(id, loadReq, o.priority, o.signal) : await this.native.open(id, loadReq, o.signal);
    const retry = !reply.ok && choice === 'auto' && kind === 'pyodide' && !o.signal?.aborted ? retryNatively(reply.error.missingModule) : null;
    if (retry) {
      // SPADE runs games in CPython; a game that imports what Pyodide lacks is not broken.
      fallbackReason = retry;
      kind = 'cpython';
      id = `rs-${randomUUID()}`;
      reply = await this.native.open(id, loadReq, o.signal);
    }
    const loaded = replyOf('load', reply);
    const output = loaded.output;
    if (!loaded.ok) return { ok: false, runtime: kind, error: loaded.error, ...(fallbackReason ? { fallbackReason } : {}), ...(output ? { output } : {}) };
    this.sessions.set(id, { id, runtime: kind, lastUsed: Date.now(), ...(o.label ? { label: o.label } : {}) });
    return { ok: true, sessionId: id, runtime: kind, load: loaded.result, ...(fallbackReason ? { fallbackReason } : {}), ...(output ? { output } : {}) };
  }

  runtimeOf(sessionId: string): RuntimeKind | undefined {
    return this.sessions.get(sessionId)?.runtime;
  }

  /**
   * One harness command for a session; environment failures come back as data, not exceptions.
   * `timeoutMs` overrides the per-call limit from settings (whole-script work such as audits).
   * The reply is typed by the request's command (./harnessMessages ReplyOf).
   */
  async call<R extends WireRequest>(sessionId: string, req: R, opts: { timeoutMs?: number; priority?: Priority } = {}): Promise<ReplyOf<R['cmd']>> {
    const s = this.sessions.get(sessionId);
    if (!s) return replyOf<R['cmd']>(req.cmd, failure('unknown_session', `No runtime session ${sessionId.slice(0, 80)} (closed, expired, or never opened)`));
    s.lastUsed = Date.now();
    const reply = s.runtime === 'pyodide' ? await this.pool.call(sessionId, req, opts.timeoutMs, opts.priority) : await this.native.call(sessionId, req, opts.timeoutMs);
    if (!reply.ok && (reply.error.restarted || reply.error.kind === 'unknown_session')) this.sessions.delete(sessionId);
    return replyOf<R['cmd']>(req.cmd, reply);
  }

  /** A session's background requests go ahead now (its episode waits on them). */
  promote(sessionId: string): void {
    if (this.sessions.get(sessionId)?.runtime === 'pyodide') this.pool.promote(sessionId);
  }

  /**
   * Cancel: stops the session's work in flight by killing its interpreter (the session is gone
   * afterwards). False when that would hit other sessions (a shared Pyodide child): the call then
   * ends by itself or at its time limit.
   */
  interrupt(sessionId: string): boolean {
    const s = this.sessions.get(sessionId);
    if (!s) return false;
    const stopped = s.runtime === 'pyodide' ? this.pool.interruptSession(sessionId) : this.native.interrupt(sessionId);
    if (stopped) this.sessions.delete(sessionId);
    return stopped;
  }

  async close(sessionId: string): Promise<boolean> {
    const s = this.sessions.get(sessionId);
    if (!s) return false;
    this.sessions.delete(sessionId);
    await this.backend(s.runtime).close(sessionId);
    return true;
  }

  /**
   * A command that belongs to no session (an extension's, e.g. the audit's "audit"): on any ready
   * Pyodide child, or in a short-lived native process.
   */
  async command<R extends WireRequest>(runtime: RuntimeKind, req: R, opts: { timeoutMs?: number } = {}): Promise<ReplyOf<R['cmd']>> {
    return replyOf<R['cmd']>(req.cmd, await (runtime === 'cpython' ? this.native.oneShot(req, opts.timeoutMs) : this.pool.anyCall(req, opts.timeoutMs)));
  }

  /** Python's own parser on the source (Pyodide's Python, the version SPADE-era code targets). */
  async checkSyntax(source: string, runtime: RuntimeKind = 'pyodide'): Promise<ReplyOf<'check_syntax'>> {
    return this.command(runtime, { cmd: 'check_syntax', source });
  }

  status(): {
    pool: PoolStatus & { started: boolean };
    native: { python: PythonInfo | null; sessions: number; crashes: number; isolation: NativeIsolation };
    sessions: number;
  } {
    return {
      pool: { ...this.pool.status(), started: this.pool.isStarted },
      native: { python: probePython(), ...this.native.status(), isolation: this.native.isolation() },
      sessions: this.sessions.size,
    };
  }

  /** For app.health and the status bar: the pool in one line. */
  components(): { name: string; state: 'ready' | 'busy' | 'starting' | 'down' | 'off'; detail: string }[] {
    const p = this.pool.status();
    const iso = this.native.isolation();
    // Native runs without an OS sandbox are the user's explicit choice; the status bar keeps saying so.
    const native = iso.sandbox === 'none' ? [{ name: 'native', state: 'busy' as const, detail: iso.sandboxDetail }] : [];
    if (!this.pool.isStarted) return [{ name: 'runtime', state: 'off', detail: 'Pyodide pool starts on first use' }, ...native];
    const state = p.ready + p.busy === 0 ? 'starting' : p.busy > 0 && p.ready === 0 ? 'busy' : 'ready';
    const parts = [`${p.ready} ready`, `${p.busy} busy`];
    if (p.starting) parts.push(`${p.starting} starting`);
    if (p.restarted) parts.push(`${p.restarted} restarted`);
    return [{ name: 'runtime', state, detail: `Pyodide ${parts.join(', ')}` }, ...native];
  }

  private sweep(idleMs: number): void {
    const now = Date.now();
    for (const s of [...this.sessions.values()]) if (now - s.lastUsed > idleMs) void this.close(s.id);
  }

  async shutdown(): Promise<void> {
    clearInterval(this.sweeper);
    this.sessions.clear();
    await Promise.all([this.pool.shutdown(), this.native.shutdown()]);
  }
}
