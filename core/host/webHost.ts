import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { errorMessage } from '../api';
import { clientFrameSchema } from '../api/wire';
import { httpStatusOf, toApiError, type Dispatch } from '../server/dispatcher';
import type { EventSource } from '../server/engineBoundary';
import { contentSecurityPolicy } from './csp';
import { readStatic } from './staticFiles';
import { isLoopback, needsTokenFor } from '../base/bind';

export interface WebHostOptions {
  dispatch: Dispatch;
  events: EventSource;
  /** The built renderer (dist/renderer); when missing the page explains how to build it. */
  staticRoot: string;
  port?: number;
  /** Bind address. Anything but loopback must be asked for explicitly and then needs a token. */
  host?: string;
  hostExplicit?: boolean;
  token?: string;
  log?: (msg: string) => void;
  /** Connection hygiene; the defaults suit a workbench, tests shorten them. */
  limits?: Partial<WebHostLimits>;
}

export interface WebHostLimits {
  /** A client that has not sent its whole request head by then is dropped (slowloris). */
  headersTimeoutMs: number;
  /** A request body still arriving after this long is dropped. */
  requestTimeoutMs: number;
  /** An HTTP connection with no traffic at all for this long is closed (sockets are exempt). */
  idleTimeoutMs: number;
  /** Connections beyond this are refused at accept time, so nobody can exhaust descriptors. */
  maxConnections: number;
}

export const defaultWebHostLimits: WebHostLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  idleTimeoutMs: 10 * 60_000,
  maxConnections: 1024,
};

export interface WebHost {
  url: string;
  port: number;
  host: string;
  token: string | undefined;
  close(): Promise<void>;
}

const MAX_BODY = 64 * 1024 * 1024;

/** A call name from the URL path; a malformed %-escape is the client's mistake, not ours. */
export function callNameFromPath(pathname: string): string | null {
  try {
    return decodeURIComponent(pathname.slice('/api/call/'.length));
  } catch {
    return null;
  }
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function cookieToken(req: IncomingMessage): string | undefined {
  const raw = req.headers.cookie ?? '';
  for (const part of raw.split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === 'spade_token') return v.join('=');
  }
  return undefined;
}

/**
 * Serves the renderer and the contract over HTTP + WebSocket. The API can run code, so even on
 * loopback it refuses requests whose Host is not ours (DNS rebinding) and WebSocket or POST
 * requests from another origin (a web page the user happens to have open).
 */
export async function startWebHost(opts: WebHostOptions): Promise<WebHost> {
  const host = opts.host ?? '127.0.0.1';
  if (!isLoopback(host) && !opts.hostExplicit) {
    throw new Error(`Refusing to bind ${host}: only loopback is allowed unless --host is given explicitly`);
  }
  const needsToken = needsTokenFor(host);
  const token = needsToken ? (opts.token ?? randomBytes(24).toString('hex')) : undefined;
  const limits = { ...defaultWebHostLimits, ...opts.limits };
  let port = opts.port ?? 0;
  const shownHost = host.includes(':') ? `[${host}]` : host;

  const hostAllowed = (req: IncomingMessage): boolean => {
    if (needsToken && !isLoopback(host)) return true; // the token is the gate when exposed on purpose
    const h = (req.headers.host ?? '').toLowerCase();
    return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${shownHost.toLowerCase()}:${port}`].includes(h);
  };
  const originAllowed = (req: IncomingMessage): boolean => {
    const origin = req.headers.origin;
    if (!origin) return true; // scripts and CLI tools send none; browsers always do
    return origin === `http://${req.headers.host}`;
  };
  const authorized = (req: IncomingMessage, url: URL): 'query' | 'cookie' | 'header' | false | true => {
    if (!token) return true;
    const q = url.searchParams.get('token');
    if (q && sameSecret(q, token)) return 'query';
    const c = cookieToken(req);
    if (c && sameSecret(c, token)) return 'cookie';
    const auth = req.headers.authorization;
    if (auth?.startsWith('Bearer ') && sameSecret(auth.slice(7), token)) return 'header';
    return false;
  };

  // Node checks the header and request timeouts on this interval (30 s by default), so without it
  // a half-open request outlives headersTimeout by up to half a minute.
  // (They must be given here: set on the server afterwards, Node's checker never sees them.)
  const server = createServer(
    { headersTimeout: limits.headersTimeoutMs, requestTimeout: limits.requestTimeoutMs, connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs) },
    (req, res) => {
      void handleHttp(req, res).catch((e) => {
        opts.log?.(`HTTP error: ${e instanceof Error && e.stack ? e.stack : errorMessage(e)}`);
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    },
  );

  async function handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://local');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    if (!hostAllowed(req)) {
      res.writeHead(421, { 'Content-Type': 'text/plain' }).end('Unexpected Host header');
      return;
    }
    const auth = authorized(req, url);
    if (!auth) {
      res.writeHead(401, { 'Content-Type': 'text/plain' }).end('This workbench needs the token printed when it started (?token=...)');
      return;
    }
    if (auth === 'query') {
      res.setHeader('Set-Cookie', `spade_token=${token}; HttpOnly; SameSite=Strict; Path=/`);
    }
    if (url.pathname.startsWith('/api/call/')) {
      const name = callNameFromPath(url.pathname);
      if (name === null) {
        res.writeHead(400, { 'Content-Type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify({ ok: false, error: { code: 'invalid_input', message: 'Malformed %-escape in the call name' } }));
        return;
      }
      await handleApiPost(req, res, name);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405).end();
      return;
    }
    const file = await readStatic(opts.staticRoot, url.pathname);
    if (!file) {
      const missing = url.pathname === '/' || url.pathname === '/index.html';
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(missing ? 'The renderer is not built. Run `npm run build` and reload.' : 'Not found');
      return;
    }
    res.writeHead(200, {
      'Content-Type': file.contentType,
      'Content-Security-Policy': contentSecurityPolicy,
      'Cache-Control': file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    });
    res.end(req.method === 'HEAD' ? undefined : file.body);
  }

  async function handleApiPost(req: IncomingMessage, res: ServerResponse, name: string): Promise<void> {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    };
    if (req.method !== 'POST') return send(405, { ok: false, error: { code: 'invalid_input', message: 'Use POST' } });
    if (!originAllowed(req)) return send(403, { ok: false, error: { code: 'unauthorized', message: 'Cross-origin request refused' } });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY) return send(413, { ok: false, error: { code: 'invalid_input', message: 'Request body too large' } });
      chunks.push(chunk as Buffer);
    }
    let input: unknown = {};
    const text = Buffer.concat(chunks).toString('utf8');
    if (text.trim()) {
      try {
        input = JSON.parse(text);
      } catch {
        return send(400, { ok: false, error: { code: 'invalid_input', message: 'Body is not valid JSON' } });
      }
    }
    try {
      const value = await opts.dispatch(name, input, { transport: 'http' });
      send(200, { ok: true, value });
    } catch (e) {
      const err = toApiError(e, name, opts.log ?? (() => {}));
      send(httpStatusOf(err.code), { ok: false, error: err.toJSON() });
    }
  }

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_BODY });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://local');
    if (url.pathname !== '/api/ws' || !hostAllowed(req) || !originAllowed(req) || !authorized(req, url)) {
      socket.write('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serveSocket(ws));
  });

  function serveSocket(ws: WebSocket): void {
    const unsubscribe = opts.events.subscribe((name, payload) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ t: 'event', name, payload }));
    });
    ws.on('close', () => unsubscribe());
    ws.on('message', (data) => {
      let frame;
      try {
        frame = clientFrameSchema.parse(JSON.parse(data.toString()));
      } catch {
        return; // not a frame we can answer: there is no id to answer to
      }
      const { id, name, input } = frame;
      opts
        .dispatch(name, input, { transport: 'websocket' })
        .then((value) => ({ t: 'result', id, ok: true, value }))
        .catch((e: unknown) => ({ t: 'result', id, ok: false, error: toApiError(e, name, opts.log ?? (() => {})).toJSON() }))
        .then((reply) => {
          if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(reply));
        });
    });
  }

  server.timeout = limits.idleTimeoutMs;
  server.maxConnections = limits.maxConnections;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const url = `http://${shownHost}:${port}/${token ? `?token=${token}` : ''}`;
  return {
    url,
    port,
    host,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
