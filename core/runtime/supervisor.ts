import { failure, type HarnessErrorKind, type HarnessReply } from './types';
import type { WireRequest } from './protocol';

/**
 * The one supervisor of an interpreter process's calls, whatever carries them: a Pyodide child of
 * the runtime pool (pyodidePool.ts) or a session's process forked by the native server
 * (forkServer.ts). It keeps a process's requests in order, one in flight at a time, with
 * background work behind every foreground request; it ends a call that runs past its limit plus a
 * grace by killing the process; and when the process dies or is closed it answers every request
 * it held, saying whether each ever ran. The transports only write lines and parse replies; the
 * pools above them decide which process serves what.
 */

/** Something the sandbox refused (open, fork, socket ...), reported by the process. */
export interface SandboxViolation {
  event: string;
  detail: string;
}

/** A refusal as the process reported it (one JSON object), trimmed; undefined if it is not one. */
export function readViolation(json: string): SandboxViolation | undefined {
  try {
    const v = JSON.parse(json) as { event?: unknown; detail?: unknown };
    return typeof v.event === 'string' ? { event: v.event.slice(0, 100), detail: String(v.detail ?? '').slice(0, 300) } : undefined;
  } catch {
    return undefined; // not one of ours
  }
}

/** Background work (a session loaded ahead of its turn) waits until nothing in the foreground does. */
export type Priority = 'foreground' | 'background';

/** One request, from the moment it is asked until it is answered. */
export interface Call {
  readonly id: number;
  /** The request as it goes on the wire: JSON with its id and the host's limit. */
  readonly line: string;
  readonly timeoutMs: number;
  /** Restore the pristine interpreter first ('math': the copy with math_verify imported). */
  readonly fresh: boolean | 'math';
  readonly session: string | undefined;
}

interface Pending extends Call {
  resolve: (r: HarnessReply) => void;
  onPhase: ((phase: string) => void) | undefined;
}

interface InFlight extends Pending {
  started: number;
  /** What the sandbox refused during this call, handed back with its reply. */
  violations?: SandboxViolation[];
  /** Audit results the judge decided during this call (Pyodide streams them), for a call that dies. */
  results?: unknown[];
}

export interface SupervisorWiring {
  /** Writes the call to the process: it is in flight from now until `settle`. */
  send(call: Call): void;
  /** Ends the process at once; called once, on death or close. */
  kill(): void;
  /** After a death (not a close): the pool above replaces or forgets the process. */
  onDeath?(reason: string): void;
  /** Each tick while a call is in flight (a resident-memory cap, for one). */
  onTick?(): void;
}

export interface SupervisorTexts {
  /** How a failed call names the process's failure ('Interpreter failure'). */
  failure: string;
  /** What happened to the process after a failure ('the interpreter was replaced'), if anything. */
  aftermath?: string;
  /** The answer to a request that reaches a dead process. */
  gone: string;
  /** The answer to requests pending when the process is closed. */
  closed: string;
}

export interface SupervisorOptions {
  /** After a call's own limit, how long the process gets to stop by itself before it is killed. */
  graceMs: number;
  texts: SupervisorTexts;
  /** Whether calls may go out at once; otherwise they wait for `ready()` (a process still starting). */
  ready?: boolean;
}

export type SupervisorState = 'starting' | 'ready' | 'dead';

/** Limits are checked this often, by one timer for every supervisor with a call in flight. */
export const TICK_MS = 250;
const watched = new Set<CallSupervisor>();
let ticker: NodeJS.Timeout | undefined;

function tickAll(): void {
  // A step costs microseconds: one slow shared timer instead of a timer per call keeps it so.
  if (watched.size === 0) {
    clearInterval(ticker);
    ticker = undefined;
    return;
  }
  const now = performance.now();
  for (const s of [...watched]) s.tick(now);
}

function watch(s: CallSupervisor): void {
  watched.add(s);
  if (!ticker) {
    ticker = setInterval(tickAll, TICK_MS);
    ticker.unref();
  }
}

export class CallSupervisor {
  private queue: Pending[] = [];
  private background: Pending[] = [];
  private inflight?: InFlight;
  private nextId = 1;
  private stateNow: SupervisorState;
  /** The audit check the call in flight announced last: kept until the next call, so a dead audit is blamed on it. */
  phase = '';

  constructor(
    private readonly wiring: SupervisorWiring,
    private readonly opts: SupervisorOptions,
  ) {
    this.stateNow = opts.ready === false ? 'starting' : 'ready';
  }

  get state(): SupervisorState {
    return this.stateNow;
  }

  get busy(): boolean {
    return this.inflight !== undefined;
  }

  /** Requests held: queued, in the background or in flight. */
  get pending(): number {
    return this.queue.length + this.background.length + (this.inflight ? 1 : 0);
  }

  /** The process can take calls now. */
  ready(): void {
    if (this.stateNow !== 'starting') return;
    this.stateNow = 'ready';
    this.pump();
  }

  /**
   * Asks the process. `fresh`: restore its pristine interpreter first; such a request never waits
   * behind background work (a session loaded meanwhile would be wiped). A session's requests keep
   * their order: behind its own background work, a foreground request waits there too.
   */
  request(req: WireRequest, timeoutMs: number, opts: { fresh?: boolean | 'math'; priority?: Priority; onPhase?: (phase: string) => void } = {}): Promise<HarnessReply> {
    if (this.stateNow === 'dead') return Promise.resolve(failure('crashed', this.opts.texts.gone));
    return new Promise((resolve) => {
      const id = this.nextId++;
      const session = 'session' in req && typeof req.session === 'string' ? req.session : undefined;
      const fresh = opts.fresh ?? false;
      const behind = !fresh && (opts.priority === 'background' || (session !== undefined && this.background.some((q) => q.session === session)));
      (behind ? this.background : this.queue).push({ id, line: JSON.stringify({ ...req, id, timeoutSec: timeoutMs / 1000 }), timeoutMs, fresh, session, resolve, onPhase: opts.onPhase });
      this.pump();
    });
  }

  /** A session's background work moves to the foreground (its episode now waits on it), in order. */
  promote(session: string): void {
    const mine = this.background.filter((q) => q.session === session);
    if (mine.length === 0) return;
    this.background = this.background.filter((q) => q.session !== session);
    this.queue.push(...mine);
    this.pump();
  }

  private pump(): void {
    if (this.stateNow !== 'ready' || this.inflight) return;
    const next = this.queue.shift() ?? this.background.shift();
    if (!next) return;
    this.inflight = { ...next, started: performance.now() };
    this.phase = '';
    watch(this);
    this.wiring.send(next);
  }

  /** The process answered the call in flight (`id`, where the transport carries one). */
  settle(reply: HarnessReply, id?: number): void {
    const cur = this.inflight;
    if (!cur || (id !== undefined && cur.id !== id)) return;
    this.inflight = undefined;
    watched.delete(this);
    if (!reply.ok && this.phase && reply.error.phase === undefined) reply.error.phase = this.phase;
    if (cur.violations) (reply as HarnessReply & { violations?: SandboxViolation[] }).violations = cur.violations;
    cur.resolve(reply);
    this.pump();
  }

  /** The process said which audit check runs now. */
  notePhase(phase: string): void {
    this.phase = phase;
    // Whoever asked sees the audit move from check to check (a single audit's progress line).
    this.inflight?.onPhase?.(phase);
  }

  /**
   * The judge decided one check of the audit in flight (one JSON object, as Audit.put makes it).
   * Kept only to be handed back if the process dies before it answers: the checks that passed
   * before a restart keep their result (issue 46). A reply that arrives carries them itself.
   */
  noteResult(json: string): void {
    const cur = this.inflight;
    if (!cur || json.length > 65536 || (cur.results ??= []).length >= 100) return;
    try {
      cur.results.push(JSON.parse(json) as unknown);
    } catch {
      // not one of ours
    }
  }

  /** The sandbox refused something during the call in flight (as readViolation gives it). */
  noteViolation(v: SandboxViolation): void {
    const cur = this.inflight;
    if (cur && (cur.violations ??= []).length < 200) cur.violations.push(v);
  }

  /** Called by the shared timer: a call past its limit and grace ends with its process. */
  tick(now: number): void {
    const cur = this.inflight;
    if (!cur) {
      watched.delete(this);
      return;
    }
    if (now - cur.started > cur.timeoutMs + this.opts.graceMs) {
      this.die(`the call ran past ${cur.timeoutMs} ms and did not stop by itself, so its process was killed`, 'timeout');
      return;
    }
    this.wiring.onTick?.();
  }

  /**
   * The process failed (exited, crashed, hung, outgrew its memory): the call in flight fails with
   * the reason (`notStarted`: it never ran, so it may go again elsewhere), queued calls say they
   * never ran, and the process is killed.
   */
  die(reason: string, kind: HarnessErrorKind, notStarted = false): void {
    if (this.stateNow === 'dead') return;
    this.stateNow = 'dead';
    watched.delete(this);
    const cur = this.inflight;
    this.inflight = undefined;
    const t = this.opts.texts;
    if (cur) {
      const what = kind === 'timeout' ? 'Time limit' : kind === 'memory' ? 'Memory limit' : t.failure;
      cur.resolve(failure(kind, `${what}: ${reason}${t.aftermath ? `; ${t.aftermath}` : ''}`, { restarted: true, ...(notStarted ? { notStarted: true } : {}), ...(this.phase ? { phase: this.phase } : {}), ...(cur.results ? { results: cur.results } : {}) }));
    }
    for (const q of this.drain()) q.resolve(failure('crashed', `${t.gone} (${reason}); the request never ran`, { restarted: true, notStarted: true }));
    this.wiring.kill();
    this.wiring.onDeath?.(reason);
  }

  /** Ends the process on purpose: everything it held is answered as closed. */
  close(): void {
    if (this.stateNow === 'dead') return;
    this.stateNow = 'dead';
    watched.delete(this);
    const cur = this.inflight;
    this.inflight = undefined;
    for (const q of [...(cur ? [cur] : []), ...this.drain()]) q.resolve(failure('closed', this.opts.texts.closed));
    this.wiring.kill();
  }

  private drain(): Pending[] {
    return [...this.queue.splice(0), ...this.background.splice(0)];
  }
}

/** The last characters a process wrote to its stderr: what its failure is explained with. */
export class StderrTail {
  private text = '';
  constructor(private readonly max: number) {}

  add(chunk: string): void {
    this.text = (this.text + chunk).slice(-this.max);
  }

  get value(): string {
    return this.text;
  }

  /** ": a | b | c" (its last lines), or nothing when it wrote nothing. */
  suffix(lines = 3): string {
    const t = this.text.trim();
    return t ? `: ${t.split('\n').slice(-lines).join(' | ')}` : '';
  }
}
