/**
 * A model endpoint reached through a job's SSH connection: the base URL names the server as the
 * job's SSH host sees it (http://gpu-node-7:30000/v1 for a server on a cluster node,
 * http://127.0.0.1:30000/v1 for one on the login node itself). Each request gets its own forwarded
 * channel (ssh2 `forwardOut`) on the job's one SSH connection and is spoken over it with node:http
 * (TLS on top for an https URL); the answer comes back as a fetch Response, so the client's JSON
 * and SSE reading, retries, turn timeout and concurrency work through it unchanged. Nothing listens
 * on this machine; a channel closes with its request. A request cut because the SSH link dropped
 * fails saying so (the client makes it a 'network' error and retries, which reconnects).
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import { errorMessage } from '../api/errors';
import { ModelError } from './client';

export interface Forwarder {
  /** Who carries the traffic, for messages: a job and its SSH login (never a credential). */
  readonly label: string;
  /** A stream to host:port as the SSH host sees it. */
  forward(host: string, port: number): Promise<Duplex>;
  /** Whether the SSH link is up now: a request cut while it is down was cut by the link. */
  connected(): boolean;
}

const NULL_BODY = new Set([101, 103, 204, 205, 304]);

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError');
}

/** `p`, unless `signal` aborts first; a stream that arrives after the abort is closed. */
function unlessAborted(p: Promise<Duplex>, signal: AbortSignal | undefined): Promise<Duplex> {
  if (!signal) return p;
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (s) => {
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted) s.destroy();
        else resolve(s);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

function bodyOf(init: RequestInit): string | Uint8Array | undefined {
  const b = init.body;
  if (b === undefined || b === null) return undefined;
  if (typeof b === 'string' || b instanceof Uint8Array) return b;
  throw new TypeError('a tunnelled request takes a string or bytes as its body');
}

/** A fetch whose requests travel through `f` to the URL's host and port as the SSH host sees them. */
export function tunnelFetch(f: Forwarder): typeof fetch {
  return async (input, init = {}) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`not an http(s) URL: ${url.protocol}`);
    const payload = bodyOf(init);
    const signal = init.signal ?? undefined;
    if (signal?.aborted) throw abortError(signal);
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const where = `${host}:${port}`;
    // Said after a tick, so that a link drop has been noticed by the time the message is chosen.
    const explain = (e: Error): Promise<Error> =>
      new Promise((resolve) =>
        setImmediate(() =>
          resolve(
            f.connected()
              ? new ModelError(`the connection to ${where} through ${f.label} closed before the answer was complete: ${errorMessage(e)}`, 'network')
              : new ModelError(`the SSH connection of ${f.label} dropped during the request to ${where}; a retry reconnects`, 'network'),
          ),
        ),
      );

    let channel: Duplex;
    try {
      channel = await unlessAborted(f.forward(host, port), signal);
    } catch (e) {
      if (signal?.aborted) throw abortError(signal);
      throw new ModelError(`could not reach ${where} through ${f.label}: ${errorMessage(e)}`, 'network');
    }
    const socket = url.protocol === 'https:' ? tlsConnect({ socket: channel, ALPNProtocols: ['http/1.1'], ...(isIP(host) ? {} : { servername: host }) }) : channel;

    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => (headers[k] = v));
    if (payload !== undefined) headers['content-length'] = String(typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength);

    return new Promise<Response>((resolve, reject) => {
      // waiting: no answer yet (errors reject); body: the Response is out (errors go to its stream); over.
      let phase: 'waiting' | 'body' | 'over' = 'waiting';
      let body: ReadableStreamDefaultController<Uint8Array> | null = null;
      let aborted = false;
      const finish = (e: Error | null) => {
        if (phase === 'over') return;
        const was = phase;
        phase = 'over';
        signal?.removeEventListener('abort', onAbort);
        socket.destroy();
        if (was === 'waiting') reject(e ?? new Error('no answer'));
        else if (e) body!.error(e);
        else body!.close();
      };
      // The request or its answer broke off: say whether the SSH link went with it.
      const broken = (e: Error) => {
        if (phase === 'over') return;
        if (aborted) finish(abortError(signal!));
        else void explain(e).then(finish);
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
        // No `agent` (not even false: Node then makes an agent of its own, which connects directly
        // and ignores createConnection); without one, the request runs on this stream and closes it.
        createConnection: () => socket as never,
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      // After the answer has begun, a socket error reaches the request too: it ends the body then.
      req.on('error', broken);
      req.on('response', (r: IncomingMessage) => {
        if (phase !== 'waiting') return void r.destroy();
        const h = new Headers();
        for (let i = 0; i + 1 < r.rawHeaders.length; i += 2) h.append(r.rawHeaders[i]!, r.rawHeaders[i + 1]!);
        const meta = { status: r.statusCode ?? 0, statusText: r.statusMessage ?? '', headers: h };
        if (NULL_BODY.has(meta.status)) {
          phase = 'over';
          signal?.removeEventListener('abort', onAbort);
          r.resume();
          socket.destroy();
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
            socket.destroy();
          },
        });
        phase = 'body';
        r.on('data', (d: Buffer) => {
          if (phase !== 'body') return;
          body!.enqueue(new Uint8Array(d));
          if ((body!.desiredSize ?? 1) <= 0) r.pause();
        });
        r.on('end', () => finish(null));
        r.on('error', broken);
        r.on('close', () => broken(new Error('the stream closed')));
        resolve(new Response(stream, meta));
      });
      if (signal?.aborted) onAbort();
      else req.end(payload);
    });
  };
}
