/**
 * A client for any OpenEnv server (a URL): its HTTP routes (/health, /metadata, /schema, /state,
 * /reset, /step, and /tasks where the server is our own serve-env) and its /ws sessions, with the
 * message shapes OpenEnv's own client sends and reads (openenv 0.10.0, pinned in
 * scripts/openenv-venv.mjs):
 *  - the socket is `<base with http->ws>/ws` (openenv/core/env_client.py:408-409, utils.convert_to_ws_url);
 *  - reset sends `{"type": "reset", "data": kwargs}` (env_client.py:995-999), step
 *    `{"type": "step", "data": action}` (env_client.py:1018-1022), state `{"type": "state"}`
 *    (env_client.py:1035), close `{"type": "close"}` (env_client.py:272);
 *  - each message gets one frame back, on the same socket; `{"type": "error", "data": {message, code}}`
 *    is the server's error (env_client.py:745-750); a result's data is `{observation, reward, done,
 *    metadata}` (generic_client.py:102-107);
 *  - it waits 10 s to connect and 60 s for each reply, and caps a frame at a size
 *    (env_client.py:322-324, 615-621); a reply that times out drops the socket, since a late frame
 *    would pair with the next request (env_client.py:706-731): we do the same.
 * Every server is hostile here: a reply past its size cap or its time, a frame that is not JSON or not
 * an object, a socket that drops, all end as a DomainError saying what happened, never a hang.
 */
import { WebSocket, type RawData } from 'ws';
import { errorMessage } from '../api/errorMessage';
import { DomainError, isUnreachable } from '../errors';

export interface ClientLimits {
  connectTimeoutMs: number;
  messageTimeoutMs: number;
  /** Largest reply (HTTP body or /ws frame) accepted; more is refused and the connection dropped. */
  maxReplyBytes: number;
}
export const DEFAULT_LIMITS: ClientLimits = { connectTimeoutMs: 10_000, messageTimeoutMs: 60_000, maxReplyBytes: 16 * 1024 * 1024 };

export interface StepResultWire {
  observation: Record<string, unknown>;
  reward: number | null;
  done: boolean;
  metadata: Record<string, unknown> | null;
}

/** The base URL a person gave, checked: http(s) only, no fragment; its ?token= (serve-env's) kept for every request. */
export function parseServerUrl(raw: string): URL {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new DomainError('invalid_input', `Not a URL: ${JSON.stringify(raw.slice(0, 200))} (give the server's base, e.g. http://127.0.0.1:8000)`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new DomainError('invalid_input', `An OpenEnv server is reached over http:// or https://, not ${u.protocol}`);
  if (u.username || u.password) throw new DomainError('invalid_input', 'Give a token as ?token=... rather than a user and password in the URL');
  u.hash = '';
  return u;
}

function route(base: URL, path: string, ws = false): string {
  const u = new URL(base.href);
  u.pathname = `${base.pathname.replace(/\/+$/, '')}${path}`;
  if (ws) u.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:';
  return u.href;
}

/** A reply as JSON, or the error that says it was not. */
function parseReply(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new DomainError('unavailable', `${what}: the server's reply is not JSON (${JSON.stringify(text.slice(0, 120))}${text.length > 120 ? '…' : ''})`);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

/** FastAPI's `{"detail": ...}` as one line (a string, or pydantic's list of field errors). */
function detailText(body: unknown): string {
  const d = isObject(body) ? body.detail : body;
  if (typeof d === 'string') return d;
  if (Array.isArray(d)) return d.map((x) => (isObject(x) ? `${Array.isArray(x.loc) ? x.loc.join('.') : '?'}: ${String(x.msg)}` : JSON.stringify(x))).join('; ');
  return JSON.stringify(d ?? body)?.slice(0, 300) ?? '';
}

/** A step or reset result as OpenEnv puts it (generic_client.py:102-107), checked. */
export function stepResultOf(data: unknown, what: string): StepResultWire {
  if (!isObject(data)) throw new DomainError('unavailable', `${what}: the server's result is not an object`);
  const obs = data.observation;
  if (!isObject(obs)) throw new DomainError('unavailable', `${what}: the server's result has no observation object`);
  const r = data.reward;
  if (r !== null && r !== undefined && typeof r !== 'number' && typeof r !== 'boolean') throw new DomainError('unavailable', `${what}: the reward is ${typeof r}, not a number`);
  const done = data.done ?? false;
  if (typeof done !== 'boolean') throw new DomainError('unavailable', `${what}: "done" is ${typeof done}, not a boolean`);
  return { observation: obs, reward: typeof r === 'boolean' ? (r ? 1 : 0) : (r ?? null), done, metadata: isObject(data.metadata) ? data.metadata : null };
}

export interface HttpReply {
  status: number;
  body: unknown;
}

/**
 * One HTTP request with the time and size limits: a body past maxReplyBytes or a reply slower than
 * messageTimeoutMs aborts the request (a server that never stops sending is cut off).
 */
export async function httpJson(base: URL, path: string, init: { method: 'GET' | 'POST'; body?: unknown }, limits: ClientLimits = DEFAULT_LIMITS): Promise<HttpReply> {
  const what = `${init.method} ${path}`;
  const control = new AbortController();
  const timer = setTimeout(() => control.abort(), limits.messageTimeoutMs);
  try {
    const headers: Record<string, string> = { Accept: 'application/json' };
    const token = base.searchParams.get('token');
    if (token) headers.Authorization = `Bearer ${token}`;
    if (init.body !== undefined) headers['Content-Type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(route(base, path), { method: init.method, headers, signal: control.signal, redirect: 'error', ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}) });
    } catch (e) {
      if (control.signal.aborted) throw new DomainError('timeout', `${what}: no answer from ${base.origin} within ${limits.messageTimeoutMs / 1000} s`);
      throw new DomainError('unavailable', `${what}: cannot reach ${base.origin}${isUnreachable(e) ? ' (nothing answers there)' : ''}: ${errorMessage((e as { cause?: unknown }).cause ?? e)}`);
    }
    const declared = Number(res.headers.get('content-length') ?? '0');
    if (declared > limits.maxReplyBytes) {
      control.abort();
      throw new DomainError('unavailable', `${what}: the reply would be ${declared} bytes, over the ${limits.maxReplyBytes}-byte cap`);
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    try {
      const reader = res.body?.getReader();
      while (reader) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > limits.maxReplyBytes) {
          control.abort();
          throw new DomainError('unavailable', `${what}: the reply passed the ${limits.maxReplyBytes}-byte cap; it was cut off`);
        }
        chunks.push(value);
      }
    } catch (e) {
      if (e instanceof DomainError) throw e;
      if (control.signal.aborted) throw new DomainError('timeout', `${what}: the reply did not finish within ${limits.messageTimeoutMs / 1000} s`);
      throw new DomainError('unavailable', `${what}: the connection dropped mid-reply: ${errorMessage(e)}`);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    return { status: res.status, body: text.trim() ? parseReply(text, what) : null };
  } finally {
    clearTimeout(timer);
  }
}

/** An HTTP reply that must be 200, else its detail as the error. */
async function ok(base: URL, path: string, init: { method: 'GET' | 'POST'; body?: unknown }, limits: ClientLimits): Promise<unknown> {
  const r = await httpJson(base, path, init, limits);
  if (r.status === 200) return r.body;
  const code = r.status === 401 || r.status === 403 ? 'unauthorized' : r.status === 404 ? 'not_found' : r.status >= 500 ? 'unavailable' : 'invalid_input';
  throw new DomainError(code, `${init.method} ${path}: the server answered ${r.status}: ${detailText(r.body)}`, { status: r.status, body: r.body });
}

/** The server's description, as /health, /metadata and /schema give it (and /tasks where it has one). */
export interface ServerInfo {
  url: string;
  healthy: boolean;
  metadata: Record<string, unknown>;
  schema: { action: Record<string, unknown>; observation: Record<string, unknown>; state: Record<string, unknown> };
  /** serve-env's GET /tasks (hint mode, task list); null on a server without one. */
  tasks: { hint: 'on' | 'off' | 'both'; max_turns: number | null; tasks: Record<string, unknown>[] } | null;
  /** Where the server says it takes a hint: serve-env's hint mode; null where it has no hint. */
  hintMode: 'on' | 'off' | 'both' | null;
  /** The action's one required string field, where it has exactly one (serve-env's and the template's `message`). */
  textField: string | null;
}

export async function describeServer(raw: string | URL, limits: ClientLimits = DEFAULT_LIMITS): Promise<ServerInfo> {
  const base = typeof raw === 'string' ? parseServerUrl(raw) : raw;
  const health = await ok(base, '/health', { method: 'GET' }, limits);
  const healthy = isObject(health) && health.status === 'healthy';
  const metadata = await ok(base, '/metadata', { method: 'GET' }, limits).catch((e: unknown) => {
    if (e instanceof DomainError && e.code === 'not_found') return {};
    throw e;
  });
  const schema = await ok(base, '/schema', { method: 'GET' }, limits);
  if (!isObject(schema) || !isObject(schema.action) || !isObject(schema.observation)) throw new DomainError('unavailable', 'GET /schema: the reply has no action and observation schemas; is this an OpenEnv server?');
  const t = await httpJson(base, '/tasks', { method: 'GET' }, limits).catch(() => null);
  let tasks: ServerInfo['tasks'] = null;
  if (t && t.status === 200 && isObject(t.body) && Array.isArray(t.body.tasks) && (t.body.hint === 'on' || t.body.hint === 'off' || t.body.hint === 'both')) {
    tasks = { hint: t.body.hint, max_turns: typeof t.body.max_turns === 'number' ? t.body.max_turns : null, tasks: t.body.tasks.filter(isObject).slice(0, 10_000) };
  }
  const props = isObject(schema.action.properties) ? schema.action.properties : {};
  const required = Array.isArray(schema.action.required) ? schema.action.required.filter((x): x is string => typeof x === 'string') : [];
  const strings = required.filter((k) => isObject(props[k]) && (props[k] as { type?: unknown }).type === 'string');
  return {
    url: base.href,
    healthy,
    metadata: isObject(metadata) ? metadata : {},
    schema: { action: schema.action, observation: schema.observation, state: isObject(schema.state) ? schema.state : {} },
    tasks,
    hintMode: tasks?.hint ?? null,
    textField: strings.length === 1 && required.length === 1 ? strings[0]! : null,
  };
}

/** Stateless HTTP /reset (OpenEnv's HTTP routes keep no episode between requests). */
export async function httpReset(raw: string | URL, data: Record<string, unknown>, limits: ClientLimits = DEFAULT_LIMITS): Promise<StepResultWire> {
  const base = typeof raw === 'string' ? parseServerUrl(raw) : raw;
  return stepResultOf(await ok(base, '/reset', { method: 'POST', body: data }, limits), 'POST /reset');
}

/** The server's error frame, as OpenEnv's client raises it (env_client.py:745-750). */
export class ServerError extends DomainError {
  constructor(
    readonly serverCode: string,
    message: string,
  ) {
    super('invalid_input', `The server refused it: ${message} (code: ${serverCode})`, { serverCode });
    this.name = 'ServerError';
  }
}

/** One /ws session: one environment instance on the server, one message answered at a time. */
export class WireSession {
  private ws: WebSocket | null;
  private waiting: { ok: (v: Record<string, unknown>) => void; fail: (e: Error) => void } | null = null;
  private dead: DomainError | null = null;
  private busy: Promise<unknown> = Promise.resolve();

  private constructor(
    ws: WebSocket,
    private readonly limits: ClientLimits,
    readonly url: string,
  ) {
    this.ws = ws;
    ws.on('message', (data, isBinary) => this.onFrame(data, isBinary));
    ws.on('close', (code, reason) => this.drop(new DomainError('unavailable', `The server closed the session (${code}${reason.length ? `: ${reason.toString().slice(0, 200)}` : ''})`)));
    ws.on('error', (e) => this.drop(new DomainError('unavailable', /max payload|Max payload/i.test(e.message) ? `The server sent a frame over the ${limits.maxReplyBytes}-byte cap; the session was dropped` : `The session's connection failed: ${e.message}`)));
  }

  private onFrame(data: RawData, isBinary: boolean): void {
    {
      const w = this.waiting;
      this.waiting = null;
      const text = isBinary ? Buffer.from(data as Buffer).toString('utf8') : data.toString();
      if (!w) {
        // A refused session (at capacity) gets one error frame, then the close (http_server.py); say its words.
        let said = '';
        try {
          const f = JSON.parse(text) as { type?: unknown; data?: { message?: unknown; code?: unknown } };
          if (f.type === 'error') said = `: ${String(f.data?.message).slice(0, 500)} (code: ${String(f.data?.code)})`;
        } catch {
          /* not JSON: said stays empty */
        }
        return this.drop(new DomainError('unavailable', said ? `The server refused the session${said}` : 'The server sent a frame nobody asked for; the session was dropped (frames would pair with the wrong requests)'));
      }
      try {
        const v = parseReply(text, 'The server');
        if (!isObject(v)) throw new DomainError('unavailable', 'The server sent a frame that is not a JSON object');
        w.ok(v);
      } catch (e) {
        w.fail(e as Error);
      }
    }
  }

  static async open(raw: string | URL, limits: ClientLimits = DEFAULT_LIMITS): Promise<WireSession> {
    const base = typeof raw === 'string' ? parseServerUrl(raw) : raw;
    const url = route(base, '/ws', true);
    const token = base.searchParams.get('token');
    const ws = new WebSocket(url, { maxPayload: limits.maxReplyBytes, handshakeTimeout: limits.connectTimeoutMs, followRedirects: false, ...(token ? { headers: { Authorization: `Bearer ${token}` } } : {}) });
    // Frames that come with the handshake (a refusal: an error frame, then the close) are kept for the session.
    const early: [RawData, boolean][] = [];
    ws.on('message', (d, b) => early.push([d, b]));
    await new Promise<void>((resolve, reject) => {
      const fail = (e: Error) => {
        ws.removeAllListeners();
        ws.on('error', () => {});
        ws.terminate();
        reject(new DomainError('unavailable', `Cannot open a session at ${url.replace(/token=[^&]+/, 'token=…')}: ${e.message}`));
      };
      ws.once('open', () => {
        ws.removeAllListeners('error');
        ws.removeAllListeners('unexpected-response');
        resolve();
      });
      ws.once('error', fail);
      ws.once('unexpected-response', (_req, res) => fail(new Error(`the server answered ${res.statusCode} instead of a WebSocket`)));
    });
    ws.removeAllListeners('message');
    const closedEarly = ws.readyState !== ws.OPEN;
    const session = new WireSession(ws, limits, base.href);
    for (const [d, b] of early) session.onFrame(d, b);
    if (closedEarly) session.drop(new DomainError('unavailable', 'The server closed the session as it opened'));
    return session;
  }

  get closed(): boolean {
    return this.ws === null;
  }

  private drop(e: DomainError): void {
    if (!this.dead) this.dead = e;
    const w = this.waiting;
    this.waiting = null;
    w?.fail(this.dead);
    const ws = this.ws;
    this.ws = null;
    if (ws) {
      ws.removeAllListeners();
      ws.on('error', () => {});
      ws.terminate();
    }
  }

  /** Sends one message and waits for its frame; an error frame becomes a ServerError, the session kept. */
  ask(msg: Record<string, unknown>): Promise<Record<string, unknown>> {
    const run = async (): Promise<Record<string, unknown>> => {
      const ws = this.ws;
      if (!ws) throw this.dead ?? new DomainError('unavailable', 'The session is closed');
      const frame = await new Promise<Record<string, unknown>>((resolve, reject) => {
        const timer = setTimeout(() => this.drop(new DomainError('timeout', `No answer to "${String(msg.type)}" within ${this.limits.messageTimeoutMs / 1000} s; the session was dropped`)), this.limits.messageTimeoutMs);
        this.waiting = {
          ok: (v) => {
            clearTimeout(timer);
            resolve(v);
          },
          fail: (e) => {
            clearTimeout(timer);
            reject(e);
          },
        };
        ws.send(JSON.stringify(msg), (e) => e && this.drop(new DomainError('unavailable', `Sending failed: ${e.message}`)));
      });
      if (frame.type === 'error') {
        const d = isObject(frame.data) ? frame.data : {};
        throw new ServerError(typeof d.code === 'string' ? d.code : 'UNKNOWN', typeof d.message === 'string' ? d.message.slice(0, 2000) : 'Unknown error');
      }
      return frame;
    };
    const next = this.busy.catch(() => {}).then(run);
    this.busy = next;
    return next;
  }

  async reset(data: Record<string, unknown> = {}): Promise<StepResultWire> {
    const f = await this.ask({ type: 'reset', data });
    return stepResultOf(f.data, 'reset');
  }

  async step(action: Record<string, unknown>): Promise<StepResultWire> {
    const f = await this.ask({ type: 'step', data: action });
    return stepResultOf(f.data, 'step');
  }

  async state(): Promise<Record<string, unknown>> {
    const f = await this.ask({ type: 'state' });
    if (!isObject(f.data)) throw new DomainError('unavailable', "state: the server's state is not an object");
    return f.data;
  }

  /** A graceful close (`{"type": "close"}`, env_client.py:269-272), then the socket is let go. */
  async close(): Promise<void> {
    const ws = this.ws;
    if (!ws) return;
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: 'close' }), () => {});
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 1000);
      ws.once('close', () => {
        clearTimeout(t);
        resolve();
      });
    });
    this.drop(new DomainError('unavailable', 'The session is closed'));
  }
}
