import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { Readable } from 'node:stream';
import { encodeCall, encodeFresh, encodeInit, onLines, splitHead, type ChildFatal, type ChildReady } from './childProtocol';
import { childBuilt, readHarness, runtimePaths, wheelsPresent, type RuntimePaths } from './paths';
import { failure, type HarnessErrorKind, type HarnessReply } from './types';
import { CallSupervisor, readViolation, StderrTail, type Priority } from './supervisor';
import type { WireRequest } from './protocol';
import { errorMessage } from '../api/errorMessage';
import { usesMathVerify } from './choice';

export interface PoolOptions {
  size?: number;
  /** Per-call limit in ms, read at each call so a settings change applies at once. */
  timeoutMs?: () => number;
  /** Resident memory a child may reach before it is killed and replaced. */
  memoryMb?: number;
  /** After the interrupt, how long Python gets to unwind before the process is killed. */
  graceMs?: number;
  /**
   * How long a child polls for the next request after each reply, in µs. Saves the wake-up of a
   * sleeping process (about 20 µs per hop between cores on our 2-core VMs) in tight step loops;
   * off on a single core, where polling would hold the CPU the parent needs to send that request, and
   * on Windows.
   */
  spinUs?: number;
  /** Sessions a child hosts in its life before it is replaced once idle (fresh state hygiene). */
  recycleAfter?: number;
  paths?: RuntimePaths;
  log?: (level: 'info' | 'warn' | 'error', msg: string) => void;
}

export interface PoolStatus {
  size: number;
  ready: number;
  busy: number;
  starting: number;
  restarted: number;
  sessions: number;
  coldMs: number | null;
  python: string | null;
  lastRestartReason: string | null;
  /** Seconds the pool has been starting with no interpreter ready yet (Pyodide's cold start), else null. */
  startingSec: number | null;
}

export type { Priority } from './supervisor';

/**
 * The Node flags a Pyodide child runs under: the permission model with reads of Pyodide's files and
 * the child script only (no writes, no child processes, no addons), code generation from strings
 * off (so a JS function reached from Python cannot compile new code), a bounded JS heap.
 * Node 20 names the flag --experimental-permission; 22+ --permission.
 */
export function childNodeFlags(p: RuntimePaths, nodeVersion = process.versions.node): string[] {
  const permFlag = Number(nodeVersion.split('.')[0]) >= 22 ? '--permission' : '--experimental-permission';
  return [
    permFlag,
    `--allow-fs-read=${p.pyodideDir}/`,
    `--allow-fs-read=${p.childScript}`,
    `--allow-fs-read=${p.wheelsDir}/`,
    '--allow-worker',
    '--disallow-code-generation-from-strings',
    '--max-old-space-size=512',
    '--no-warnings',
  ];
}

let nextWorkerId = 1;

/** Waits for `p` unless `signal` aborts first: true when `p` settled, false when cancelled. */
function untilAborted(p: Promise<unknown>, signal?: AbortSignal): Promise<boolean> {
  if (!signal) return p.then(() => true);
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(false);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve(!signal.aborted);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted) resolve(false);
        else reject(e instanceof Error ? e : new Error(errorMessage(e)));
      },
    );
  });
}

/** Which pristine copy a new environment starts from: the one with math_verify for games that use it. */
function freshKind(req: WireRequest): true | 'math' {
  return 'source' in req && usesMathVerify(req.source) ? 'math' : true;
}

/** One child process with one Pyodide interpreter; its calls are kept by the shared supervisor. */
class PoolWorker {
  readonly wid = nextWorkerId++;
  readonly proc: ChildProcess;
  readonly sessions = new Set<string>();
  hosted = 0;
  coldMs: number | null = null;
  python: string | null = null;
  readonly ready: Promise<void>;
  private rejectReady?: (e: Error) => void;
  private readonly calls: CallSupervisor;
  private readonly stderrTail = new StderrTail(4000);

  constructor(
    private readonly opts: Required<Pick<PoolOptions, 'memoryMb' | 'graceMs' | 'spinUs'>> & { paths: RuntimePaths; files: Record<string, string> },
    onDeath: (w: PoolWorker, reason: string) => void,
  ) {
    const p = opts.paths;
    const args = [...childNodeFlags(p), p.childScript];
    this.proc = spawn(process.env.SPADE_NODE || process.execPath, args, {
      // Nothing of the host's environment (tokens, keys) reaches the interpreter's process.
      env: process.versions.electron ? { ELECTRON_RUN_AS_NODE: '1' } : {},
      stdio: ['pipe', 'ignore', 'pipe', 'pipe'],
    });
    this.calls = new CallSupervisor(
      {
        // One write for both lines: each write to a sleeping child's pipe costs the host a wake-up.
        send: (c) => {
          const call = encodeCall(c.id, c.timeoutMs, c.line);
          this.sendRaw(c.fresh ? encodeFresh(c.fresh === 'math') + call : call);
        },
        kill: () => {
          try {
            this.proc.kill('SIGKILL');
          } catch {
            // already gone
          }
        },
        onDeath: (reason) => onDeath(this, reason),
        onTick: () => this.checkMemory(),
      },
      {
        graceMs: opts.graceMs,
        ready: false,
        texts: { failure: 'Interpreter failure', aftermath: 'the interpreter was replaced', gone: 'the interpreter was restarted; this session is gone', closed: 'the runtime pool is shutting down' },
      },
    );
    this.proc.stdin!.on('error', () => {});
    this.proc.stderr?.on('data', (d: Buffer) => {
      this.stderrTail.add(d.toString('utf8'));
    });
    this.ready = new Promise<void>((resolve, reject) => {
      this.rejectReady = reject;
      onLines(this.proc.stdio[3] as Readable, (line) => {
        const tag = line.charCodeAt(0);
        if (tag === 82 /* R */) {
          const [id, at] = splitHead(line, 1);
          let reply: HarnessReply;
          try {
            reply = JSON.parse(line.slice(at)) as HarnessReply;
          } catch {
            this.die('the interpreter sent a malformed reply', 'crashed');
            return;
          }
          this.calls.settle(reply, id);
        } else if (tag === 89 /* Y */) {
          const m = JSON.parse(line.slice(1)) as ChildReady;
          this.coldMs = m.coldMs;
          this.python = m.python;
          resolve();
          this.calls.ready();
        } else if (tag === 80 /* P */) {
          this.calls.notePhase(line.slice(1));
        } else if (tag === 81 /* Q: an audit check's result, as the judge decided it */) {
          this.calls.noteResult(line.slice(1));
        } else if (tag === 86 /* V */) {
          const v = readViolation(line.slice(1));
          if (v) this.calls.noteViolation(v);
        } else if (tag === 70 /* F */) {
          const m = JSON.parse(line.slice(1)) as ChildFatal;
          if (m.id === -1) reject(new Error(m.message));
          // -2: it could not be made pristine for the next environment, which therefore never ran.
          this.die(`interpreter failed: ${m.message.split('\n')[0]}`, 'crashed', m.id === -2);
        }
      });
      this.proc.on('exit', (code, signal) => {
        if (this.calls.state === 'starting') reject(new Error(`Pyodide child exited during start (${signal ?? code}): ${this.stderrTail.value.slice(-1000)}`));
        this.die(`process exited (${signal ?? code})`, 'crashed');
      });
      this.proc.on('error', (e) => reject(e));
    });
    this.ready.catch(() => {});
    this.sendRaw(encodeInit({ pyodideDir: p.pyodideDir, files: opts.files, spinUs: opts.spinUs, ...(wheelsPresent(p) ? { wheelsDir: p.wheelsDir } : {}) }));
  }

  get state(): 'starting' | 'ready' | 'dead' {
    return this.calls.state;
  }

  get busy(): boolean {
    return this.calls.busy;
  }

  get load(): number {
    return this.sessions.size + this.calls.pending;
  }

  /** `fresh`: restore the pristine interpreter first (a new environment on an otherwise idle child). */
  request(req: WireRequest, timeoutMs: number, fresh: boolean | 'math' = false, priority: Priority = 'foreground', onPhase?: (phase: string) => void): Promise<HarnessReply> {
    return this.calls.request(req, timeoutMs, { fresh, priority, ...(onPhase ? { onPhase } : {}) });
  }

  /** A session's background work moves to the foreground (its episode now waits on it), in order. */
  promote(session: string): void {
    this.calls.promote(session);
  }

  private checkMemory(): void {
    const pid = this.proc.pid;
    if (!pid) return;
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const m = /VmRSS:\s+(\d+) kB/.exec(status);
      if (m && Number(m[1]) / 1024 > this.opts.memoryMb) this.die(`memory above ${this.opts.memoryMb} MiB`, 'memory');
    } catch {
      // no /proc (not Linux) or the process is gone: the exit handler covers the latter
    }
  }

  private sendRaw(line: string): void {
    try {
      this.proc.stdin!.write(line);
    } catch {
      this.die('could not send to the interpreter', 'crashed');
    }
  }

  die(reason: string, kind: HarnessErrorKind, inflightNotStarted = false): void {
    this.calls.die(reason, kind, inflightNotStarted);
  }

  stop(): void {
    // Stopped while starting (Cancel of the cold start): whoever waits for it hears so.
    const starting = this.calls.state === 'starting';
    this.calls.close();
    if (starting) this.rejectReady?.(new Error('the Pyodide start was stopped (cancelled, or the runtime shut down)'));
  }
}

/**
 * A pool of Pyodide interpreters in child processes. A session is pinned to one child (its game
 * object lives there); new sessions go to the least loaded child. A child that hangs past the
 * interrupt, crashes or outgrows its memory cap is killed and replaced; its sessions are lost and
 * say so when next called.
 */
export class PyodidePool {
  private workers: PoolWorker[] = [];
  private readonly sessionWorker = new Map<string, PoolWorker>();
  private restarts = 0;
  private lastReason: string | null = null;
  private closed = false;
  private started = false;
  private startedAt = 0;
  readonly size: number;
  private readonly opts: Required<Omit<PoolOptions, 'size' | 'paths' | 'log'>> & Pick<PoolOptions, 'log'>;
  private readonly paths: RuntimePaths;
  private files?: Record<string, string>;

  constructor(opts: PoolOptions = {}) {
    this.size = Math.max(1, opts.size ?? Math.min(8, availableParallelism()));
    this.paths = opts.paths ?? runtimePaths();
    this.opts = {
      timeoutMs: opts.timeoutMs ?? (() => 30_000),
      memoryMb: opts.memoryMb ?? 1536,
      graceMs: opts.graceMs ?? 3000,
      recycleAfter: opts.recycleAfter ?? 500,
      // Not on Windows: a synchronous read of a libuv pipe there may block instead of failing with EAGAIN.
      spinUs: opts.spinUs ?? (availableParallelism() > 1 && process.platform !== 'win32' ? 200 : 0),
      log: opts.log,
    };
  }

  /** Starts the children (once); resolves when at least one interpreter is ready. */
  async start(): Promise<void> {
    if (this.closed) throw new Error('runtime pool is closed');
    if (!this.started) {
      if (!childBuilt(this.paths)) throw new Error(`The runtime child is not built (${this.paths.childScript}); run \`npm run build\``);
      this.files = readHarness(this.paths);
      this.started = true;
      this.startedAt = Date.now();
      for (let i = 0; i < this.size; i++) this.workers.push(this.spawn());
    }
    await Promise.any(this.workers.map((w) => w.ready)).catch((e: unknown) => {
      const inner = e instanceof AggregateError ? e.errors[0] : e;
      throw inner instanceof Error ? inner : new Error(errorMessage(inner));
    });
  }

  /** Resolves when every child is ready (benchmarks and tests that need the full pool). */
  async allReady(): Promise<void> {
    await this.start();
    await Promise.all(this.workers.map((w) => w.ready));
  }

  private spawn(): PoolWorker {
    return new PoolWorker({ paths: this.paths, files: this.files!, memoryMb: this.opts.memoryMb, graceMs: this.opts.graceMs, spinUs: this.opts.spinUs }, (w, reason) => this.replace(w, reason));
  }

  private replace(w: PoolWorker, reason: string): void {
    for (const sid of w.sessions) this.sessionWorker.delete(sid);
    const i = this.workers.indexOf(w);
    if (i < 0 || this.closed) return;
    this.restarts++;
    this.lastReason = reason;
    this.opts.log?.('warn', `Pyodide interpreter ${w.wid} replaced: ${reason}`);
    this.workers[i] = this.spawn();
  }

  /** The least loaded child; for a new environment, one that hosts no session if there is one (it can be made pristine). */
  private pick(forEnvironment = false): PoolWorker {
    const live = this.workers.filter((w) => w.state !== 'dead');
    const ready = live.filter((w) => w.state === 'ready');
    let from = ready.length ? ready : live;
    if (forEnvironment) {
      const empty = from.filter((w) => w.sessions.size === 0);
      if (empty.length) from = empty;
    }
    return from.reduce((a, b) => (b.load < a.load ? b : a));
  }

  /**
   * Runs a request for a new session on the least loaded child and pins the session there.
   * `signal` (the person pressed Cancel): while the pool is still starting the request is dropped
   * before it is sent; while it runs on a child that hosts no other session, that child is killed
   * (replaced, as after a crash), the only way to stop Python that never yields. On a shared child
   * the load is let finish and its session closed at once. Either way the answer is `cancelled`.
   */
  async open(sessionId: string, req: WireRequest, priority: Priority = 'foreground', signal?: AbortSignal): Promise<HarnessReply> {
    const cancelled = (notStarted: boolean) => failure('cancelled', 'opening the session was cancelled', notStarted ? { notStarted: true } : {});
    if (signal?.aborted) return cancelled(true);
    if (!(await untilAborted(this.start(), signal))) return cancelled(true);
    const w = this.pick(true);
    // A child with no other session gets its pristine interpreter back first. (With more open
    // sessions than children, a session shares its interpreter: the status says so.)
    const fresh = w.sessions.size === 0;
    if (!fresh) this.opts.log?.('info', `session ${sessionId.slice(0, 40)} shares interpreter ${w.wid} with ${w.sessions.size} open session(s)`);
    // Claimed before any await, so sessions opened together spread over the children.
    w.sessions.add(sessionId);
    w.hosted++;
    this.sessionWorker.set(sessionId, w);
    if (!(await untilAborted(w.ready.catch(() => {}), signal))) {
      this.forget(sessionId);
      return cancelled(true);
    }
    const stop = () => {
      if (w.sessions.size === 1) w.die('cancelled by the user', 'cancelled');
    };
    signal?.addEventListener('abort', stop, { once: true });
    let reply: HarnessReply;
    try {
      reply = await w.request({ ...req, session: sessionId }, this.opts.timeoutMs(), fresh && freshKind(req), priority);
    } finally {
      signal?.removeEventListener('abort', stop);
    }
    if (reply.ok && signal?.aborted) {
      await this.close(sessionId);
      return cancelled(false);
    }
    if (!reply.ok) this.forget(sessionId);
    return signal?.aborted ? cancelled(false) : reply;
  }

  has(sessionId: string): boolean {
    return this.sessionWorker.has(sessionId);
  }

  async call(sessionId: string, req: WireRequest, timeoutMs?: number, priority: Priority = 'foreground'): Promise<HarnessReply> {
    const w = this.sessionWorker.get(sessionId);
    if (!w || w.state === 'dead') return failure('unknown_session', 'this session is gone (closed, or its interpreter was replaced)');
    return w.request({ ...req, session: sessionId }, timeoutMs ?? this.opts.timeoutMs(), false, priority);
  }

  /** The session's background requests go ahead now: its episode waits on them. */
  promote(sessionId: string): void {
    this.sessionWorker.get(sessionId)?.promote(sessionId);
  }

  /**
   * A request that belongs to no session (syntax checks, whole audits): any ready child serves it.
   * `onPhase` hears the audit's checks as they start; `signal` ends the call at once by killing
   * its child (replaced as after a crash), the only way to stop Python that never yields.
   */
  async anyCall(req: WireRequest, timeoutMs?: number, ctl: { onPhase?: (phase: string) => void; signal?: AbortSignal } = {}): Promise<HarnessReply> {
    if (ctl.signal?.aborted) return failure('cancelled', 'cancelled before it started', { notStarted: true });
    // Cancel during Pyodide's cold start answers at once: the request is dropped before it is sent.
    if (!(await untilAborted(this.start(), ctl.signal))) return failure('cancelled', 'cancelled before it started', { notStarted: true });
    // A whole-environment command (the audit) runs on pristine state when the child hosts no session.
    const whole = req.cmd === 'audit';
    const w = this.pick(whole);
    if (!(await untilAborted(w.ready.catch(() => {}), ctl.signal))) return failure('cancelled', 'cancelled before it started', { notStarted: true });
    const stop = () => w.die('cancelled by the user', 'cancelled');
    ctl.signal?.addEventListener('abort', stop, { once: true });
    try {
      return await w.request(req, timeoutMs ?? this.opts.timeoutMs(), whole && w.sessions.size === 0 && freshKind(req), 'foreground', ctl.onPhase);
    } finally {
      ctl.signal?.removeEventListener('abort', stop);
    }
  }

  /**
   * Cancel of the cold start (the status bar's): while no interpreter is ready yet, the starting
   * ones are stopped (their processes killed) and the pool is idle again, to start afresh on its
   * next use; whatever waited on them fails. False when there is no cold start to stop.
   */
  cancelStart(): boolean {
    if (this.coldSince === null) return false;
    const starting = this.workers;
    this.workers = [];
    this.started = false;
    for (const sid of [...this.sessionWorker.keys()]) this.sessionWorker.delete(sid);
    for (const w of starting) w.stop();
    this.opts.log?.('info', `Pyodide start cancelled: ${starting.length} starting interpreter(s) stopped`);
    return true;
  }

  /** Since when the pool has been starting with no interpreter ready yet (ms since epoch), or null. */
  get coldSince(): number | null {
    if (!this.started || this.workers.some((w) => w.state === 'ready')) return null;
    return this.startedAt;
  }

  async close(sessionId: string): Promise<void> {
    const w = this.sessionWorker.get(sessionId);
    if (!w) return;
    await w.request({ cmd: 'close', session: sessionId }, this.opts.timeoutMs());
    this.forget(sessionId);
  }

  private forget(sessionId: string): void {
    const w = this.sessionWorker.get(sessionId);
    this.sessionWorker.delete(sessionId);
    if (!w) return;
    w.sessions.delete(sessionId);
    // A child that hosted many games is replaced once idle, so leftovers of hostile code
    // (patched builtins, module state) cannot accumulate over a long audit.
    if (w.sessions.size === 0 && w.hosted >= this.opts.recycleAfter && !w.busy && w.state === 'ready') {
      const i = this.workers.indexOf(w);
      w.stop();
      if (i >= 0 && !this.closed) this.workers[i] = this.spawn();
    }
  }

  /**
   * Cancel of a session's work in flight (a step that spins): its child is killed and replaced
   * when it hosts no other session, the only way to stop Python that never yields. False on a
   * shared child: the call runs to its end or its time limit, and the caller discards the session.
   */
  interruptSession(sessionId: string): boolean {
    const w = this.sessionWorker.get(sessionId);
    if (!w || w.sessions.size !== 1) return false;
    w.die('cancelled by the user', 'cancelled');
    return true;
  }

  /** Kills the child of a session (tests: prove a replacement comes up healthy). */
  killSessionWorker(sessionId: string): boolean {
    const w = this.sessionWorker.get(sessionId);
    if (!w) return false;
    w.die('killed on request', 'crashed');
    return true;
  }

  status(): PoolStatus {
    const live = this.workers.filter((w) => w.state !== 'dead');
    const first = live.find((w) => w.coldMs !== null);
    return {
      size: this.size,
      ready: live.filter((w) => w.state === 'ready' && !w.busy).length,
      busy: live.filter((w) => w.state === 'ready' && w.busy).length,
      starting: live.filter((w) => w.state === 'starting').length,
      restarted: this.restarts,
      sessions: this.sessionWorker.size,
      coldMs: first?.coldMs ?? null,
      python: first?.python ?? null,
      lastRestartReason: this.lastReason,
      startingSec: this.coldSince === null ? null : (Date.now() - this.coldSince) / 1000,
    };
  }

  get isStarted(): boolean {
    return this.started;
  }

  async shutdown(): Promise<void> {
    this.closed = true;
    for (const w of this.workers) w.stop();
    this.workers = [];
    this.sessionWorker.clear();
  }
}
