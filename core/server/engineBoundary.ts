import { ApiError, errorMessage, type EventName } from '../api';
import type { CallContext, Dispatch } from './dispatcher';
import type { EventBus } from './events';

/**
 * The message code on both sides of the engine boundary. The engine (dispatcher + services) runs
 * behind a MessagePort-like channel, in a worker thread (core/host/engineProcess.ts) or, for tests
 * that reach into its services, on a MessageChannel in the same thread; either way every call, its
 * reply or ApiError, a cancel and every pushed event cross here as plain messages, so the process
 * that owns the window (Electron's main, the web host) never runs a handler or waits on SQLite.
 */

/** The host's side of a port: a worker's `Worker`, a MessageChannel's port. */
export interface PortLike {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
}

export type HostToEngine =
  | { t: 'call'; id: number; name: unknown; input: unknown; transport: CallContext['transport'] }
  | { t: 'cancel'; id: number }
  | { t: 'hostReply'; id: number; ok: true; value: unknown }
  | { t: 'hostReply'; id: number; ok: false; message: string }
  | { t: 'close' };

export type EngineToHost =
  | { t: 'result'; id: number; ok: true; value: unknown }
  | { t: 'result'; id: number; ok: false; error: ReturnType<ApiError['toJSON']> }
  | { t: 'event'; name: EventName; payload: unknown }
  | { t: 'hostRequest'; id: number; op: string; args: unknown }
  | { t: 'ready' }
  | { t: 'failed'; message: string }
  | { t: 'closed' }
  /** A hook the engine must have at once (the keychain sealer); answered on a side port, see engineProcess.ts. */
  | { t: 'hostRequestSync'; op: string; args: unknown };

/** A call that takes longer than this inside the engine is logged with its name and duration. */
export const SLOW_CALL_MS = 100;

export type EngineLog = (level: 'debug' | 'info' | 'warn' | 'error', source: string, message: string) => void;

export interface ServeEngineOptions {
  dispatch: Dispatch;
  events: EventBus;
  log: EngineLog;
  /** Closes the engine's services; the host then ends the thread. */
  close(): Promise<void>;
  slowCallMs?: number;
}

/** The engine's side: answers calls, drops the reply of a cancelled one, forwards every event. */
export function serveEngine(port: PortLike, opts: ServeEngineOptions): { hostRequest(op: string, args: unknown): Promise<unknown> } {
  const slowMs = opts.slowCallMs ?? SLOW_CALL_MS;
  const cancelled = new Set<number>();
  const asked = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let nextAsk = 1;
  const post = (m: EngineToHost) => port.postMessage(m);
  opts.events.subscribe((name, payload) => post({ t: 'event', name, payload }));

  async function answer(m: Extract<HostToEngine, { t: 'call' }>): Promise<void> {
    const t0 = performance.now();
    let reply: EngineToHost;
    try {
      reply = { t: 'result', id: m.id, ok: true, value: await opts.dispatch(m.name, m.input, { transport: m.transport }) };
    } catch (e) {
      const err = e instanceof ApiError ? e : new ApiError('internal', errorMessage(e));
      reply = { t: 'result', id: m.id, ok: false, error: err.toJSON() };
    }
    const ms = performance.now() - t0;
    if (ms > slowMs) opts.log('warn', 'engine', `slow call ${String(m.name).slice(0, 200)}: ${ms.toFixed(0)} ms in the engine`);
    // A cancelled call's work is not stopped (no handler takes a signal, see CallContext), only its
    // reply: the host has already answered the caller with `cancelled`.
    if (cancelled.delete(m.id)) return;
    try {
      post(reply);
    } catch (e) {
      // A value structured clone refuses is a handler bug; the caller still gets an answer.
      post({ t: 'result', id: m.id, ok: false, error: new ApiError('internal', `${String(m.name)} returned a value that cannot cross to the host: ${errorMessage(e)}`).toJSON() });
    }
  }

  port.on('message', (raw) => {
    const m = raw as HostToEngine;
    if (m.t === 'call') void answer(m);
    else if (m.t === 'cancel') cancelled.add(m.id);
    else if (m.t === 'hostReply') {
      const p = asked.get(m.id);
      asked.delete(m.id);
      if (p && m.ok) p.resolve(m.value);
      else p?.reject(new Error(m.ok ? 'no reply' : m.message));
    } else if (m.t === 'close') {
      void opts.close().finally(() => post({ t: 'closed' }));
    }
  });
  return {
    hostRequest(op, args) {
      const id = nextAsk++;
      return new Promise((resolve, reject) => {
        asked.set(id, { resolve, reject });
        post({ t: 'hostRequest', id, op, args });
      });
    },
  };
}

type Listener = (name: EventName, payload: unknown) => void;

/** What a transport subscribes to: the engine's EventBus itself, or the host's copy of its events. */
export interface EventSource {
  subscribe(l: Listener): () => void;
}

/** The host's fan-out of the engine's events; payloads were checked by the engine's EventBus. */
export class EventHub implements EventSource {
  private listeners = new Set<Listener>();
  emit(name: EventName, payload: unknown): void {
    for (const l of this.listeners) {
      try {
        l(name, payload);
      } catch {
        // A broken subscriber (a closed socket, say) must not stop the others.
      }
    }
  }
  subscribe(l: Listener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
}

export type HostHandlers = Record<string, (args: unknown) => Promise<unknown> | unknown>;

/**
 * The host's side: each call gets an id and a pending promise; a result settles it, a cancel
 * settles it at once with `cancelled`, and when the engine goes away every pending call fails
 * with `unavailable` and the reason (a window never waits on an engine that is gone).
 */
export class EngineClient {
  private pending = new Map<number, { resolve(v: unknown): void; reject(e: ApiError): void; name: string }>();
  private nextId = 1;
  private port: PortLike | null = null;
  private down: string | null = null;
  private readonly onMessage = (raw: unknown) => this.receive(raw as EngineToHost);

  constructor(
    readonly events: EventHub,
    private readonly hostHandlers: HostHandlers = {},
    private readonly onLifecycle: (m: Extract<EngineToHost, { t: 'ready' | 'failed' | 'closed' }>) => void = () => {},
  ) {}

  attach(port: PortLike): void {
    this.detach();
    this.port = port;
    this.down = null;
    port.on('message', this.onMessage);
  }

  /** The engine is gone: every pending call fails now, and later ones until a new port is attached. */
  fail(reason: string): void {
    this.detach();
    this.down = reason;
    const err = () => new ApiError('unavailable', reason);
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      p.reject(err());
    }
  }

  send(m: HostToEngine): void {
    this.port?.postMessage(m);
  }

  call(name: unknown, input: unknown, ctx: CallContext = { transport: 'in-process' }, signal?: AbortSignal): Promise<unknown> {
    if (this.down !== null || !this.port) return Promise.reject(new ApiError('unavailable', this.down ?? 'The engine is not running'));
    if (signal?.aborted) return Promise.reject(new ApiError('cancelled', `${String(name).slice(0, 200)} was cancelled`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, name: String(name).slice(0, 200) });
      signal?.addEventListener(
        'abort',
        () => {
          if (!this.pending.delete(id)) return;
          this.send({ t: 'cancel', id });
          reject(new ApiError('cancelled', `${String(name).slice(0, 200)} was cancelled`));
        },
        { once: true },
      );
      try {
        this.send({ t: 'call', id, name, input, transport: ctx.transport });
      } catch (e) {
        // Input structured clone refuses (a function, say) is the caller's mistake.
        this.pending.delete(id);
        reject(new ApiError('invalid_input', `The input of ${String(name).slice(0, 200)} cannot be sent to the engine: ${errorMessage(e)}`));
      }
    });
  }

  /** The transports' Dispatch (web host, Electron IPC): the same contract, the engine elsewhere. */
  readonly dispatch: Dispatch = (name, input, ctx) => this.call(name, input, ctx);

  get pendingCalls(): number {
    return this.pending.size;
  }

  private detach(): void {
    this.port?.off('message', this.onMessage);
    this.port = null;
  }

  private receive(m: EngineToHost): void {
    if (m.t === 'result') {
      const p = this.pending.get(m.id);
      if (!p) return; // cancelled: its caller was answered already
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.value);
      else p.reject(ApiError.from(m.error));
    } else if (m.t === 'event') {
      this.events.emit(m.name, m.payload);
    } else if (m.t === 'hostRequest') {
      void this.answerHost(m);
    } else if (m.t === 'ready' || m.t === 'failed' || m.t === 'closed') {
      this.onLifecycle(m);
    }
  }

  private async answerHost(m: Extract<EngineToHost, { t: 'hostRequest' }>): Promise<void> {
    const handler = this.hostHandlers[m.op];
    try {
      if (!handler) throw new Error(`The host offers no ${m.op}`); // not-user-facing: sent back to the engine's caller, which wraps it
      this.send({ t: 'hostReply', id: m.id, ok: true, value: await handler(m.args) });
    } catch (e) {
      this.send({ t: 'hostReply', id: m.id, ok: false, message: errorMessage(e) });
    }
  }
}
