/**
 * A fetch for the model client built on node:http(s), for the two ways a request reaches a model
 * server: directly, over keep-alive connections that the client reuses (`directFetch`), or over a
 * stream made for that one request, such as an SSH channel (`tunnel.ts`). The answer is a fetch
 * Response, so the client's JSON and SSE reading, retries, turn timeout and cancel work the same
 * through both.
 *
 * Why not the global fetch: at 64 turns in flight, undici's fetch (its Request/Headers objects,
 * WHATWG streams and WASM parser) took about a quarter of the main thread during a regret run, and
 * that thread also feeds the interpreters; node:http does the same exchange for much less
 * (policy.regret_throughput_ratio).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import { errorMessage } from '../api/errorMessage';

/** How one request reaches its server. */
export type Channel =
  /** A connection of its own (a tunnel's channel): closed with the request. */
  | { socket: Duplex }
  /** A pooled keep-alive connection from this agent: handed back when the answer has been read. */
  | { agent: HttpAgent };

export interface Route {
  channel(url: URL, host: string, port: number, signal: AbortSignal | undefined): Promise<Channel>;
  /** The error a request that broke off (before or during its answer) fails with. */
  broken(e: Error, where: string): Promise<Error>;
}

const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError');
}

function bodyOf(init: RequestInit): string | Uint8Array | undefined {
  const b = init.body;
  if (b === undefined || b === null) return undefined;
  if (typeof b === 'string' || b instanceof Uint8Array) return b;
  throw new TypeError('this fetch takes a string or bytes as a request body');
}

function headersOf(init: RequestInit): Record<string, string> {
  const h = init.headers;
  const out: Record<string, string> = {};
  if (!h) return out;
  // The client passes a plain object; anything else goes through Headers once.
  if (typeof h === 'object' && !(h instanceof Headers) && !Array.isArray(h)) {
    for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = String(v);
    return out;
  }
  new Headers(h).forEach((v, k) => (out[k] = v));
  return out;
}

/** A fetch whose requests reach their server the way `route` says. */
export function nodeFetch(route: Route): typeof fetch {
  return async (input, init = {}) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`not an http(s) URL: ${url.protocol}`);
    const payload = bodyOf(init);
    const signal = init.signal ?? undefined;
    if (signal?.aborted) throw abortError(signal);
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const where = `${host}:${port}`;
    const channel = await route.channel(url, host, port, signal);
    const own = 'socket' in channel ? channel.socket : null;

    const headers = headersOf(init);
    if (payload !== undefined) headers['content-length'] = String(typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength);

    return new Promise<Response>((resolve, reject) => {
      // waiting: no answer yet (errors reject); body: the Response is out (errors go to its stream); over.
      let phase: 'waiting' | 'body' | 'over' = 'waiting';
      let body: ReadableStreamDefaultController<Uint8Array> | null = null;
      let aborted = false;
      // A pooled connection goes back to its agent once the answer was read to its end; one that
      // broke off, or a channel of its own, is closed.
      const finish = (e: Error | null) => {
        if (phase === 'over') return;
        const was = phase;
        phase = 'over';
        signal?.removeEventListener('abort', onAbort);
        if (own) own.destroy();
        else if (e) req.destroy();
        if (was === 'waiting') reject(e ?? new Error('no answer'));
        else if (e) body!.error(e);
        else body!.close();
      };
      const broke = (e: Error) => {
        if (phase === 'over') return;
        if (aborted) finish(abortError(signal!));
        else void route.broken(e, where).then(finish);
      };
      const onAbort = () => {
        aborted = true;
        const e = abortError(signal!);
        finish(e);
        req.destroy(e);
      };
      const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)({
        method: init.method ?? 'GET',
        host,
        port,
        path: `${url.pathname}${url.search}`,
        headers,
        // A channel of its own: no agent at all (with `agent: false` Node would make one of its own,
        // which connects directly and ignores createConnection); the request runs on that stream.
        ...(own ? { createConnection: () => own as never } : { agent: (channel as { agent: HttpAgent }).agent }),
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      // After the answer has begun, a socket error reaches the request too: it ends the body then.
      req.on('error', broke);
      req.on('response', (r: IncomingMessage) => {
        if (phase !== 'waiting') return void r.destroy();
        const h = new Headers();
        for (let i = 0; i + 1 < r.rawHeaders.length; i += 2) h.append(r.rawHeaders[i]!, r.rawHeaders[i + 1]!);
        const meta = { status: r.statusCode ?? 0, statusText: r.statusMessage ?? '', headers: h };
        if (NULL_BODY.has(meta.status)) {
          phase = 'over';
          signal?.removeEventListener('abort', onAbort);
          r.resume();
          own?.destroy();
          resolve(new Response(null, meta));
          return;
        }
        const stream = new ReadableStream<Uint8Array>({
          start(ctrl) {
            body = ctrl;
          },
          pull() {
            r.resume();
          },
          cancel() {
            phase = 'over';
            signal?.removeEventListener('abort', onAbort);
            r.destroy();
            own?.destroy();
          },
        });
        phase = 'body';
        r.on('data', (d: Buffer) => {
          if (phase !== 'body') return;
          body!.enqueue(new Uint8Array(d.buffer, d.byteOffset, d.byteLength));
          if ((body!.desiredSize ?? 1) <= 0) r.pause();
        });
        r.on('end', () => finish(null));
        r.on('error', broke);
        r.on('close', () => broke(new Error('the stream closed')));
        resolve(new Response(stream, meta));
      });
      if (signal?.aborted) onAbort();
      else req.end(payload);
    });
  };
}

/**
 * Straight to the server over keep-alive connections, at most `connections` of them (the client's
 * concurrency). Idle connections do not keep the process alive, and Node closes one before the
 * server's advertised keep-alive timeout runs out; a connection the server closed anyway fails its
 * request as a network error, which the client retries.
 */
export function directFetch(connections: number): typeof fetch {
  const opts = { keepAlive: true, maxSockets: Math.max(1, connections), scheduling: 'lifo' as const };
  const http = new HttpAgent(opts);
  const https = new HttpsAgent(opts);
  return nodeFetch({
    channel: (url) => Promise.resolve({ agent: url.protocol === 'https:' ? https : http }),
    broken: (e, where) => Promise.resolve(new Error(`the connection to ${where} failed: ${errorMessage(e)}`)),
  });
}
