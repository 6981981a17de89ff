import type WebSocket from 'ws';
import type { JobRecord, LogChunk } from '../types';

/** How the tail reaches the cluster; the Ray backend supplies it so tunnels and tokens live in one place. */
export interface TailLink {
  /** The whole log, as `GET /api/jobs/{id}/logs` returns it. */
  fetchLog(job: JobRecord): Promise<Buffer>;
  /** A socket to `/api/jobs/{id}/logs/tail` (connecting). */
  openSocket(job: JobRecord): Promise<WebSocket>;
}

type TailState = 'connecting' | 'open' | 'down' | 'ended' | 'polling' | 'closed';

/**
 * One job's received bytes. `base` is the remote offset of the first byte held, and everything
 * from `base` up to `seen` is exactly the remote log there: both sources (the socket and GET /logs)
 * add only the bytes past `seen`, so whichever arrives first wins and the other is skipped.
 */
class Tail {
  parts: Buffer[] = [];
  held = 0;
  state: TailState = 'connecting';
  socket: WebSocket | null = null;
  /** Bytes received on the current socket; Ray's tail replays the log from byte 0. */
  pos = 0;
  connecting: Promise<void> | null = null;
  everOpened = false;
  retry: NodeJS.Timeout | null = null;
  backoff = FIRST_BACKOFF_MS;
  constructor(public job: JobRecord, public base: number) {}

  get seen(): number {
    return this.base + this.held;
  }
}

// A function, not an inline test: finish() may close the tail while connect() awaits.
const isClosed = (t: Tail): boolean => t.state === 'closed';

const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 10_000;

/**
 * Live log following over Ray's `/logs/tail` WebSocket, served through the same byte-offset
 * `readLog` the polling path offers, so the manager cannot tell them apart. A dropped socket is
 * replaced after a catch-up read from the last offset; a tail that cannot be opened at all leaves
 * the job on polling.
 */
export class RayLogTail {
  private readonly tails = new Map<string, Tail>();
  constructor(private readonly link: TailLink) {}

  /** Whether a socket is open for the job now (for tests and status lines). */
  isLive(jobId: string): boolean {
    return this.tails.get(jobId)?.state === 'open';
  }

  async read(job: JobRecord, offset: number, max: number): Promise<LogChunk> {
    let t = this.tails.get(job.id);
    if (!t) {
      t = new Tail(job, offset);
      this.tails.set(job.id, t);
      this.startConnect(t);
    }
    t.job = job;
    if (t.connecting) await t.connecting;
    if (offset < t.base || offset > t.seen) {
      // The caller's offset is outside what is held (it moved on by another path): start over there.
      this.resync(t, await this.link.fetchLog(job), offset);
    } else if (t.state !== 'open' && t.state !== 'ended') {
      // No live socket (polling, or between reconnects): a plain read keeps the log moving.
      this.add(t, await this.link.fetchLog(job), 0);
    }
    // The caller asks from its committed offset, so nothing before it is needed again.
    this.trim(t, offset);
    const held = t.parts.length === 1 ? t.parts[0]! : Buffer.concat(t.parts);
    t.parts = held.length ? [held] : [];
    return { data: held.subarray(0, max), size: t.seen };
  }

  /** The job ended (or is gone): stop its socket and forget what was held. */
  finish(jobId: string): void {
    const t = this.tails.get(jobId);
    if (!t) return;
    t.state = 'closed';
    if (t.retry) clearTimeout(t.retry);
    t.retry = null;
    t.socket?.terminate();
    t.socket = null;
    t.parts = [];
    t.held = 0;
    this.tails.delete(jobId);
  }

  close(): void {
    for (const id of [...this.tails.keys()]) this.finish(id);
  }

  /** Adds the bytes of `chunk`, which sit at remote offset `at`, that lie past `seen`. */
  private add(t: Tail, chunk: Buffer, at: number): boolean {
    const seen = t.seen;
    if (at > seen) return false;
    const skip = seen - at;
    if (skip < chunk.length) {
      const fresh = chunk.subarray(skip);
      t.parts.push(fresh);
      t.held += fresh.length;
    }
    return true;
  }

  private resync(t: Tail, all: Buffer, offset: number): void {
    t.base = offset;
    const rest = offset < all.length ? all.subarray(offset) : Buffer.alloc(0);
    t.parts = rest.length ? [rest] : [];
    t.held = rest.length;
  }

  private trim(t: Tail, offset: number): void {
    let drop = offset - t.base;
    if (drop <= 0) return;
    t.base = offset;
    t.held -= drop;
    while (drop > 0 && t.parts.length > 0) {
      const first = t.parts[0]!;
      if (first.length <= drop) {
        t.parts.shift();
        drop -= first.length;
      } else {
        t.parts[0] = first.subarray(drop);
        drop = 0;
      }
    }
  }

  private startConnect(t: Tail): void {
    t.state = 'connecting';
    t.connecting = this.connect(t).finally(() => {
      t.connecting = null;
    });
  }

  /** Catch up from the last offset with GET /logs, then open the tail and skip what was seen. */
  private async connect(t: Tail): Promise<void> {
    try {
      this.add(t, await this.link.fetchLog(t.job), 0);
    } catch {
      if (t.state !== 'closed') this.down(t);
      return;
    }
    if (t.state === 'closed') return;
    let ws: WebSocket;
    try {
      ws = await this.link.openSocket(t.job);
    } catch {
      this.notOpened(t);
      return;
    }
    // Listeners go on before the handshake ends: the first frames can follow it in the same packet.
    t.socket = ws;
    t.pos = 0;
    ws.on('message', (data: WebSocket.RawData) => {
      if (t.socket !== ws) return;
      const chunk = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
      const at = t.pos;
      t.pos += chunk.length;
      // A frame past what is held would leave a hole; drop the socket and let the catch-up fill it.
      if (!this.add(t, chunk, at)) ws.terminate();
    });
    ws.on('error', () => {
      // 'close' follows every error; the state is decided there.
    });
    const opened = await new Promise<boolean>((resolve) => {
      ws.once('open', () => resolve(true));
      ws.once('close', () => resolve(false));
    });
    if (isClosed(t)) {
      ws.terminate();
      return;
    }
    if (!opened) {
      if (t.socket === ws) t.socket = null;
      this.notOpened(t);
      return;
    }
    t.state = 'open';
    t.everOpened = true;
    t.backoff = FIRST_BACKOFF_MS;
    ws.on('close', (code: number) => {
      if (t.socket !== ws || t.state === 'closed') return;
      t.socket = null;
      // A normal close is Ray saying the job's log has ended; anything else is a dropped link.
      if (code === 1000) t.state = 'ended';
      else this.down(t);
    });
  }

  private notOpened(t: Tail): void {
    if (t.state === 'closed') return;
    // Never opened: this cluster has no usable tail, so the job stays on polling for good.
    if (!t.everOpened) t.state = 'polling';
    else this.down(t);
  }

  private down(t: Tail): void {
    t.state = 'down';
    if (t.retry) return;
    t.retry = setTimeout(() => {
      t.retry = null;
      if (t.state === 'down') this.startConnect(t);
    }, t.backoff);
    t.backoff = Math.min(t.backoff * 2, MAX_BACKOFF_MS);
  }
}
