/**
 * An OpenEnv server over the workbench's library: OpenEnv's HTTP routes (/reset, /step, /state,
 * /schema, /metadata, /health, /mcp, /openapi.json, plus GET /tasks) and its /ws sessions, one
 * environment instance per connection, with OpenEnv's message and error shapes (./wire.ts).
 * Environment code never runs here: every instance plays in the runtime's sandbox (./episode.ts).
 * It binds 127.0.0.1 unless told otherwise, with the web host's rules (core/host/webHost.ts): the
 * Host header must be ours on loopback, browsers' cross-origin sockets and POSTs are refused, and
 * any bind but the default loopback needs the token (`?token=`, or `Authorization: Bearer`).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { ZodError } from 'zod';
import { errorMessage } from '../api/errorMessage';
import { DomainError } from '../errors';
import { isLoopback, needsTokenFor } from '../base/bind';
import { OpenEnvInstance, type Served } from './episode';
import { openApiDocument } from './openapi';
import { handleRpc } from './rpc';
import { actionSchema, ACTION_JSON_SCHEMA, fieldErrors, OBSERVATION_JSON_SCHEMA, resetDataSchema, STATE_JSON_SCHEMA, stepRequestSchema, WS_ERROR, wsCloseSchema, wsError, wsMcpSchema, wsResetSchema, wsStateSchema, wsStepSchema } from './wire';

export interface OpenEnvServerOptions {
  served: Served;
  port?: number;
  host?: string;
  hostExplicit?: boolean;
  token?: string;
  /** Most /ws sessions at once (OpenEnv's max_concurrent_envs); more are refused with CAPACITY_REACHED. */
  concurrency: number;
  version: string;
  log?: (msg: string) => void;
}

export interface SessionInfo {
  id: string;
  remote: string;
  since: string;
  steps: number;
  task: string | null;
}

export interface OpenEnvServer {
  url: string;
  port: number;
  host: string;
  token: string | undefined;
  sessions(): SessionInfo[];
  close(): Promise<void>;
}

const MAX_BODY = 16 * 1024 * 1024;
/** Messages a /ws client may have waiting for their answers; a client that floods past it is cut off (1008). */
const MAX_PENDING = 256;

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** An engine failure as the message an OpenEnv client shows (SPADE's refusal text included). */
function failureText(e: unknown): string {
  return e instanceof DomainError ? e.message : `internal error: ${errorMessage(e)}`;
}

export async function startOpenEnvServer(o: OpenEnvServerOptions): Promise<OpenEnvServer> {
  const host = o.host ?? '127.0.0.1';
  if (!isLoopback(host) && !o.hostExplicit) throw new DomainError('invalid_input', `Refusing to bind ${host}: only loopback is allowed unless --host is given explicitly`);
  const token = needsTokenFor(host) ? (o.token ?? randomBytes(24).toString('hex')) : undefined;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  let port = o.port ?? 0;
  const log = o.log ?? (() => {});
  const { served } = o;

  const hostAllowed = (req: IncomingMessage): boolean => {
    if (token && !isLoopback(host)) return true; // exposed on purpose: the token is the gate
    const h = (req.headers.host ?? '').toLowerCase();
    return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${shownHost.toLowerCase()}:${port}`].includes(h);
  };
  const originAllowed = (req: IncomingMessage): boolean => !req.headers.origin || req.headers.origin === `http://${req.headers.host}`;
  const authorized = (req: IncomingMessage, url: URL): boolean => {
    if (!token) return true;
    const q = url.searchParams.get('token');
    const auth = req.headers.authorization;
    return (!!q && sameSecret(q, token)) || (!!auth?.startsWith('Bearer ') && sameSecret(auth.slice(7), token));
  };

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  };

  async function readJson(req: IncomingMessage): Promise<{ ok: true; value: unknown } | { ok: false; status: number; detail: unknown }> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY) return { ok: false, status: 413, detail: 'Request body too large' };
      chunks.push(chunk as Buffer);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    if (!text.trim()) return { ok: true, value: undefined };
    try {
      return { ok: true, value: JSON.parse(text) };
    } catch (e) {
      return { ok: false, status: 422, detail: [{ type: 'json_invalid', loc: ['body', 0], msg: 'JSON decode error', ctx: { error: errorMessage(e) } }] };
    }
  }

  const live = new Map<WebSocket, { info: SessionInfo; inst: OpenEnvInstance }>();
  let httpResets = 0;

  const routes: Record<string, { method: 'GET' | 'POST'; run: (req: IncomingMessage, res: ServerResponse) => Promise<void> | void }> = {
    '/health': { method: 'GET', run: (_q, res) => send(res, 200, { status: 'healthy' }) },
    '/metadata': {
      method: 'GET',
      run: (_q, res) =>
        send(res, 200, {
          name: 'spade-workbench',
          description: `SPADE games from the SPADE Workbench library, played in its sandbox: ${served.envs.length} environment version(s), ${served.tasks.length} task(s) (GET /tasks), hint ${served.hint}, budget ${served.maxTurns} turns`,
          readme_content: null,
          version: o.version,
          author: null,
          documentation_url: null,
        }),
    },
    '/schema': { method: 'GET', run: (_q, res) => send(res, 200, { action: ACTION_JSON_SCHEMA, observation: OBSERVATION_JSON_SCHEMA, state: STATE_JSON_SCHEMA }) },
    '/state': { method: 'GET', run: (_q, res) => send(res, 200, { episode_id: null, step_count: 0 }) },
    '/tasks': { method: 'GET', run: (_q, res) => send(res, 200, { tasks: served.tasks, hint: served.hint, max_turns: served.maxTurns }) },
    '/openapi.json': { method: 'GET', run: (_q, res) => send(res, 200, openApiDocument(o.version)) },
    '/reset': {
      method: 'POST',
      // OpenEnv's HTTP /reset is stateless: a fresh instance resets and is closed (the episode is recorded).
      async run(req, res) {
        const body = await readJson(req);
        if (!body.ok) return send(res, body.status, { detail: body.detail });
        const parsed = resetDataSchema.safeParse(body.value ?? {});
        if (!parsed.success) return send(res, 422, { detail: fieldErrors(parsed.error, ['body']) });
        // Each costs a sandboxed interpreter while it runs, so it counts against --concurrency too.
        if (live.size + httpResets >= o.concurrency) return send(res, 503, { detail: `Server at capacity: ${live.size + httpResets}/${o.concurrency} sessions active (--concurrency)` });
        httpResets++;
        const inst = new OpenEnvInstance(served, 'serve-env http');
        try {
          send(res, 200, await inst.reset(parsed.data));
        } catch (e) {
          send(res, e instanceof DomainError && e.code !== 'unavailable' ? 400 : 500, { detail: failureText(e) });
        } finally {
          httpResets--;
          await inst.release();
        }
      },
    },
    '/step': {
      method: 'POST',
      async run(req, res) {
        const body = await readJson(req);
        if (!body.ok) return send(res, body.status, { detail: body.detail });
        const parsed = stepRequestSchema.safeParse(body.value);
        if (!parsed.success) return send(res, 422, { detail: fieldErrors(parsed.error, ['body']) });
        const action = actionSchema.safeParse(parsed.data.action);
        if (!action.success) return send(res, 422, { detail: fieldErrors(action.error, ['body', 'action']) });
        // A fresh instance has no episode to step (OpenEnv's HTTP routes keep none between requests).
        send(res, 409, { detail: 'HTTP /step has no episode to step: OpenEnv keeps no state between HTTP requests. Play an episode over the /ws session (reset, then step).' });
      },
    },
    '/mcp': {
      method: 'POST',
      async run(req, res) {
        if (!originAllowed(req)) return send(res, 403, { detail: 'Cross-origin request refused' });
        const body = await readJson(req);
        send(res, 200, handleRpc(body.ok ? body.value : Symbol('unparsable')));
      },
    },
  };

  const server = createServer({ headersTimeout: 10_000, requestTimeout: 60_000, connectionsCheckingInterval: 1000 }, (req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://local');
      if (!hostAllowed(req)) return res.writeHead(421, { 'Content-Type': 'text/plain' }).end('Unexpected Host header');
      if (!authorized(req, url)) return send(res, 401, { detail: 'This server needs the token printed when it started (?token=... or Authorization: Bearer ...)' });
      const route = routes[url.pathname];
      if (!route) return send(res, 404, { detail: 'Not Found' });
      if (req.method !== route.method) return send(res, 405, { detail: 'Method Not Allowed' });
      if (route.method === 'POST' && !originAllowed(req)) return send(res, 403, { detail: 'Cross-origin request refused' });
      await route.run(req, res);
    })().catch((e: unknown) => {
      log(`serve-env HTTP error: ${errorMessage(e)}`);
      if (!res.headersSent) send(res, 500, { detail: 'Internal Server Error' });
      else res.end();
    });
  });
  server.maxConnections = Math.max(64, o.concurrency * 2 + 32);

  let sessionSeq = 0;
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_BODY });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://local');
    if (url.pathname !== '/ws' || !hostAllowed(req) || !originAllowed(req) || !authorized(req, url)) {
      socket.write('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serveSocket(ws, req));
  });

  function serveSocket(ws: WebSocket, req: IncomingMessage): void {
    ws.on('error', () => {});
    if (live.size + httpResets >= o.concurrency) {
      // http_server.py: a refused session gets one error frame, then the socket closes.
      ws.send(wsError(WS_ERROR.capacity, `Server at capacity: ${live.size}/${o.concurrency} sessions active (--concurrency)`, { active_sessions: live.size, max_sessions: o.concurrency }));
      ws.close();
      return;
    }
    const info: SessionInfo = { id: `s${++sessionSeq}`, remote: `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? '?'}`, since: new Date().toISOString(), steps: 0, task: null };
    const inst = new OpenEnvInstance(served, `serve-env ${info.id}`);
    live.set(ws, { info, inst });
    // One message at a time, in order, as OpenEnv's server loop answers them.
    let chain: Promise<void> = Promise.resolve();
    let closing = false;
    let pending = 0;
    const reply = (text: string) => {
      if (ws.readyState === ws.OPEN) ws.send(text);
    };
    ws.on('message', (data, isBinary) => {
      if (++pending > MAX_PENDING) {
        closing = true;
        ws.close(1008, `more than ${MAX_PENDING} messages waiting for their answers`);
        return;
      }
      chain = chain.then(async () => {
        if (closing) return;
        const text = reply;
        let msg: unknown;
        try {
          msg = JSON.parse(isBinary ? Buffer.from(data as Buffer).toString('utf8') : data.toString());
        } catch (e) {
          return text(wsError(WS_ERROR.invalidJson, `Invalid JSON: ${errorMessage(e)}`));
        }
        const type = msg && typeof msg === 'object' && !Array.isArray(msg) ? (msg as { type?: unknown }).type : undefined;
        try {
          if (type === 'reset') {
            const m = wsResetSchema.parse(msg);
            const d = resetDataSchema.safeParse(m.data);
            if (!d.success) return text(JSON.stringify({ type: 'error', data: { message: 'Invalid message', code: WS_ERROR.validation, errors: fieldErrors(d.error, ['data']) } }));
            const r = await inst.reset(d.data);
            info.steps = 0;
            info.task = String(r.observation.task_id);
            return text(JSON.stringify({ type: 'observation', data: r }));
          }
          if (type === 'step') {
            const m = wsStepSchema.parse(msg);
            const a = actionSchema.safeParse(m.data);
            if (!a.success) return text(JSON.stringify({ type: 'error', data: { message: 'Invalid message', code: WS_ERROR.validation, errors: fieldErrors(a.error, ['data']) } }));
            const r = await inst.step(a.data.message);
            info.steps++;
            return text(JSON.stringify({ type: 'observation', data: r }));
          }
          if (type === 'state') {
            wsStateSchema.parse(msg);
            return text(JSON.stringify({ type: 'state', data: inst.state() }));
          }
          if (type === 'close') {
            wsCloseSchema.parse(msg);
            closing = true;
            ws.close();
            return;
          }
          if (type === 'mcp') {
            const m = wsMcpSchema.parse(msg);
            return text(JSON.stringify({ type: 'mcp', data: handleRpc(m.data) }));
          }
          return text(wsError(WS_ERROR.unknownType, `Unknown message type: ${typeof type === 'string' ? type : ''}`));
        } catch (e) {
          if (e instanceof ZodError) return text(JSON.stringify({ type: 'error', data: { message: 'Invalid message', code: WS_ERROR.validation, errors: fieldErrors(e) } }));
          if (!(e instanceof DomainError)) log(`serve-env session ${info.id}: ${e instanceof Error && e.stack ? e.stack : errorMessage(e)}`);
          return text(wsError(WS_ERROR.execution, failureText(e)));
        }
      })
        .catch((e: unknown) => log(`serve-env session ${info.id}: ${errorMessage(e)}`))
        .finally(() => {
          pending--;
        });
    });
    ws.on('close', () => {
      closing = true;
      live.delete(ws);
      void chain.then(() => inst.release());
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://${shownHost}:${port}`,
    port,
    host,
    token,
    sessions: () => [...live.values()].map((l) => ({ ...l.info })),
    close: async () => {
      for (const c of wss.clients) c.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([...live.values()].map((l) => l.inst.release()));
      live.clear();
    },
  };
}
