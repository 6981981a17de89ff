import type { Backend } from './backend';
import { ApiError } from './errors';
import { parseEvent, type CallName, type EventName } from './index';
import { serverFrameSchema, type ServerFrame } from './wire';

/** The subset of the WebSocket API we use, so Node tests can pass the `ws` package's class. */
interface SocketLike {
  readyState: number;
  send(data: string): void;
  close(): void;
  onopen: ((ev: unknown) => void) | null;
  onclose: ((ev: unknown) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
}
type SocketCtor = new (url: string) => SocketLike;

export interface WsBackendOptions {
  url: string;
  WebSocketImpl?: SocketCtor;
  /** Give up a call that got no answer after this long (the server enforces its own limits too). */
  callTimeoutMs?: number;
  /** An event whose payload is outside its schema was dropped. */
  onInvalidEvent?: (problem: string) => void;
}

interface Pending {
  resolve(v: unknown): void;
  reject(e: unknown): void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * A Backend over one WebSocket. Calls made while the socket is (re)connecting are queued;
 * calls in flight when it drops fail with `unavailable` rather than hanging, because the
 * server may or may not have run them and only the caller knows whether a retry is safe.
 */
export function createWsBackend(opts: WsBackendOptions): Backend & { ready: Promise<void> } {
  const Ctor: SocketCtor = opts.WebSocketImpl ?? (globalThis as unknown as { WebSocket: SocketCtor }).WebSocket;
  const listeners = new Map<string, Set<(p: unknown) => void>>();
  const connListeners = new Set<(s: 'connected' | 'reconnecting' | 'closed') => void>();
  const pending = new Map<number, Pending>();
  const queue: string[] = [];
  let nextId = 1;
  let socket: SocketLike | null = null;
  let closed = false;
  let backoff = 250;
  let resolveReady: () => void = () => {};
  const ready = new Promise<void>((r) => (resolveReady = r));

  const setState = (s: 'connected' | 'reconnecting' | 'closed') => connListeners.forEach((l) => l(s));

  function connect(): void {
    const ws = new Ctor(opts.url);
    socket = ws;
    ws.onopen = () => {
      backoff = 250;
      setState('connected');
      resolveReady();
      for (const frame of queue.splice(0)) ws.send(frame);
    };
    ws.onmessage = (ev) => {
      let frame: ServerFrame;
      try {
        frame = serverFrameSchema.parse(JSON.parse(String(ev.data)));
      } catch {
        return;
      }
      if (frame.t === 'event') {
        const set = listeners.get(frame.name);
        if (!set?.size) return;
        const parsed = parseEvent(frame.name, frame.payload);
        if (!parsed.ok) {
          opts.onInvalidEvent?.(parsed.error);
          return;
        }
        set.forEach((l) => l(parsed.payload));
        return;
      }
      const p = pending.get(frame.id);
      if (!p) return;
      pending.delete(frame.id);
      if (p.timer) clearTimeout(p.timer);
      if (frame.ok) p.resolve(frame.value);
      else p.reject(ApiError.from(frame.error));
    };
    ws.onerror = () => {};
    ws.onclose = () => {
      socket = null;
      for (const [id, p] of pending) {
        pending.delete(id);
        if (p.timer) clearTimeout(p.timer);
        p.reject(new ApiError('unavailable', 'Connection to the workbench backend was lost'));
      }
      if (closed) {
        setState('closed');
        return;
      }
      setState('reconnecting');
      setTimeout(connect, backoff);
      backoff = Math.min(backoff * 2, 5000);
    };
  }
  connect();

  return {
    transport: 'websocket',
    ready,
    call(name: CallName, input: unknown) {
      const id = nextId++;
      const frame = JSON.stringify({ t: 'call', id, name, input });
      return new Promise((resolve, reject) => {
        const timer = opts.callTimeoutMs
          ? setTimeout(() => {
              pending.delete(id);
              reject(new ApiError('timeout', `No answer to ${name} within ${opts.callTimeoutMs} ms`));
            }, opts.callTimeoutMs)
          : undefined;
        pending.set(id, { resolve, reject, timer });
        if (socket && socket.readyState === 1) socket.send(frame);
        else queue.push(frame);
      });
    },
    on(event: EventName, listener: (p: never) => void) {
      const set = listeners.get(event) ?? new Set();
      listeners.set(event, set);
      const l = listener as (p: unknown) => void;
      set.add(l);
      return () => set.delete(l);
    },
    onConnection(listener) {
      connListeners.add(listener);
      return () => connListeners.delete(listener);
    },
    close() {
      closed = true;
      socket?.close();
    },
  } as Backend & { ready: Promise<void> };
}
