/**
 * A model endpoint reached through a job's SSH connection: the base URL names the server as the
 * job's SSH host sees it (http://gpu-node-7:30000/v1 for a server on a cluster node,
 * http://127.0.0.1:30000/v1 for one on the login node itself). Each request gets its own forwarded
 * channel (ssh2 `forwardOut`) on the job's one SSH connection and is spoken over it with node:http
 * (TLS on top for an https URL, see httpFetch.ts); the answer comes back as a fetch Response, so the client's JSON
 * and SSE reading, retries, turn timeout and concurrency work through it unchanged. Nothing listens
 * on this machine; a channel closes with its request. A request cut because the SSH link dropped
 * fails saying so (the client makes it a 'network' error and retries, which reconnects).
 */
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import { errorMessage } from '../api/errors';
import { ModelError } from './client';
import { abortError, nodeFetch } from './httpFetch';

export interface Forwarder {
  /** Who carries the traffic, for messages: a job and its SSH login (never a credential). */
  readonly label: string;
  /** A stream to host:port as the SSH host sees it. */
  forward(host: string, port: number): Promise<Duplex>;
  /** Whether the SSH link is up now: a request cut while it is down was cut by the link. */
  connected(): boolean;
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

/** A fetch whose requests travel through `f` to the URL's host and port as the SSH host sees them. */
export function tunnelFetch(f: Forwarder): typeof fetch {
  return nodeFetch({
    async channel(url, host, port, signal) {
      let channel: Duplex;
      try {
        channel = await unlessAborted(f.forward(host, port), signal);
      } catch (e) {
        if (signal?.aborted) throw abortError(signal);
        throw new ModelError(`could not reach ${host}:${port} through ${f.label}: ${errorMessage(e)}`, 'network');
      }
      return { socket: url.protocol === 'https:' ? tlsConnect({ socket: channel, ALPNProtocols: ['http/1.1'], ...(isIP(host) ? {} : { servername: host }) }) : channel };
    },
    // Said after a tick, so that a link drop has been noticed by the time the message is chosen.
    broken: (e, where) =>
      new Promise((resolve) =>
        setImmediate(() =>
          resolve(
            f.connected()
              ? new ModelError(`the connection to ${where} through ${f.label} closed before the answer was complete: ${errorMessage(e)}`, 'network')
              : new ModelError(`the SSH connection of ${f.label} dropped during the request to ${where}; a retry reconnects`, 'network'),
          ),
        ),
      ),
  });
}
