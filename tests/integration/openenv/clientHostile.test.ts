/**
 * The OpenEnv client (core/openenv/client.ts) against hostile servers: a real HTTP + WebSocket server
 * on 127.0.0.1 that answers garbage, too much, never, or drops the socket mid-episode. Each gets a
 * clear error, within the client's time limit, and what was played before the failure is kept.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeServer, httpJson, parseServerUrl, WireSession, type ClientLimits } from '../../../core/openenv/client';
import { playRemote, scriptedActor } from '../../../core/openenv/remotePlay';
import { auditWire } from '../../../core/openenv/wireAudit';
import { DomainError } from '../../../core/errors';

const LIMITS: ClientLimits = { connectTimeoutMs: 2000, messageTimeoutMs: 1500, maxReplyBytes: 64 * 1024 };
const SCHEMA = { action: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] }, observation: { type: 'object' }, state: {} };

/** What the /ws side does with each message, by the mode in the URL path (/MODE/ws). */
type Mode = 'good' | 'garbage' | 'huge' | 'silent' | 'drop' | 'array' | 'extra' | 'refuse';
let server: Server;
let base: string;
const sockets = new Set<WebSocket>();

function answerWs(mode: Mode, ws: WebSocket, msg: { type?: string; data?: Record<string, unknown> }, n: number): void {
  const obs = (text: string, reward: number, done: boolean) => JSON.stringify({ type: 'observation', data: { observation: { text }, reward, done, metadata: null } });
  if (msg.type === 'close') return ws.close();
  if (msg.type === 'state') return ws.send(JSON.stringify({ type: 'state', data: { step_count: n } }));
  if (msg.type === 'reset') return ws.send(obs('start', 0, false));
  // Steps: the first two are answered well in every mode, so there is something to keep.
  if (n <= 2 || mode === 'good') return ws.send(obs(`turn ${n}`, 0.5, false));
  if (mode === 'garbage') return ws.send('<html>502 Bad Gateway</html>');
  if (mode === 'huge') return ws.send(JSON.stringify({ type: 'observation', data: { observation: { text: 'x'.repeat(1024 * 1024) }, reward: 0, done: false } }));
  if (mode === 'silent') return;
  if (mode === 'drop') return ws.terminate();
  if (mode === 'array') return ws.send('[1, 2, 3]');
  if (mode === 'extra') {
    ws.send(obs('one', 0, false));
    ws.send(obs('two', 0, false));
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    if (path.startsWith('/good/health') || path.startsWith('/huge-ws/health')) return res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"status":"healthy"}');
    if (path.endsWith('/metadata')) return res.writeHead(200).end('{"name":"hostile"}');
    if (path.endsWith('/schema')) return res.writeHead(200).end(JSON.stringify(SCHEMA));
    if (path.endsWith('/tasks')) return res.writeHead(404).end('{"detail":"Not Found"}');
    if (path.startsWith('/garbage/')) return res.writeHead(200).end('this is not json {');
    if (path.startsWith('/error/')) return res.writeHead(500).end('{"detail":"the environment crashed: KeyError"}');
    if (path.startsWith('/huge/')) {
      // A body that never stops: the cap must cut it off.
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const pump = () => {
        while (res.write(chunk));
        res.once('drain', pump);
      };
      res.on('close', () => res.removeAllListeners('drain'));
      return pump();
    }
    if (path.startsWith('/trickle/')) {
      // A reply that starts and never ends.
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"status": "');
      const t = setInterval(() => res.write('h'), 200);
      res.on('close', () => clearInterval(t));
      return;
    }
    if (path.startsWith('/silent/')) return; // never answers at all
    res.writeHead(404).end('{"detail":"Not Found"}');
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const mode = (req.url ?? '').split('/')[1] as Mode;
    if (!['good', 'garbage', 'huge', 'silent', 'drop', 'array', 'extra', 'refuse'].includes(mode)) {
      socket.write('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return socket.destroy();
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      ws.on('close', () => sockets.delete(ws));
      if (mode === 'refuse') {
        ws.send(JSON.stringify({ type: 'error', data: { message: 'Server at capacity: 1/1 sessions active', code: 'CAPACITY_REACHED' } }));
        return ws.close();
      }
      let n = 0;
      ws.on('message', (d) => {
        const msg = JSON.parse(d.toString()) as { type?: string };
        if (msg.type === 'step') n++;
        answerWs(mode, ws, msg, n);
      });
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.terminate();
  server.closeAllConnections();
  await new Promise<void>((ok) => server.close(() => ok()));
});

async function failure(p: Promise<unknown>): Promise<DomainError> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(DomainError);
  return e as DomainError;
}

const infoFor = (mode: string) => ({ url: `${base}/${mode}/`, healthy: true, metadata: {}, schema: { action: SCHEMA.action, observation: {}, state: {} }, tasks: null, hintMode: null, textField: 'message' });

describe('the OpenEnv client against hostile servers', () => {
  it('refuses a URL that is not an http(s) server', () => {
    expect(() => parseServerUrl('file:///etc/passwd')).toThrow(/http:\/\/ or https:\/\//);
    expect(() => parseServerUrl('not a url')).toThrow(/Not a URL/);
    expect(() => parseServerUrl('http://user:pw@127.0.0.1:1')).toThrow(/token/);
  });

  it('says so when nothing answers at the URL', async () => {
    const probe = createServer();
    await new Promise<void>((ok) => probe.listen(0, '127.0.0.1', ok));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((ok) => probe.close(() => ok()));
    const e = await failure(describeServer(`http://127.0.0.1:${port}`, LIMITS));
    expect(e.code).toBe('unavailable');
    expect(e.message).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+ \(nothing answers there\)/);
    const w = await failure(WireSession.open(`http://127.0.0.1:${port}`, LIMITS));
    expect(w.message).toMatch(/Cannot open a session/);
  });

  it('names a reply that is not JSON, a server error, a body past the cap and one that never ends', async () => {
    expect((await failure(describeServer(`${base}/garbage`, LIMITS))).message).toMatch(/GET \/health: the server's reply is not JSON \("this is not json \{"\)/);
    const err = await failure(describeServer(`${base}/error`, LIMITS));
    expect(err.code).toBe('unavailable');
    expect(err.message).toMatch(/answered 500: the environment crashed: KeyError/);
    expect((await failure(httpJson(parseServerUrl(`${base}/huge`), '/health', { method: 'GET' }, LIMITS))).message).toMatch(/passed the 65536-byte cap; it was cut off/);
    const slow = await failure(httpJson(parseServerUrl(`${base}/trickle`), '/health', { method: 'GET' }, LIMITS));
    expect(slow.code).toBe('timeout');
    expect(slow.message).toMatch(/did not finish within 1\.5 s/);
    const silent = await failure(httpJson(parseServerUrl(`${base}/silent`), '/health', { method: 'GET' }, LIMITS));
    expect(silent.code).toBe('timeout');
    expect(silent.message).toMatch(/no answer from .* within 1\.5 s/);
  });

  it('keeps a well-behaved episode whole (the control case)', async () => {
    const s = await WireSession.open(`${base}/good/`, LIMITS);
    const ep = await playRemote(s, infoFor('good'), { seed: 1, hint: false, maxTurns: 4, actor: scriptedActor(['a', 'b', 'c', 'd']) });
    await s.close();
    expect(ep.endedBy).toBe('budget');
    expect(ep.turns.map((t) => t.error)).toEqual([null, null, null, null, null]);
  });

  const broken: [Mode, RegExp][] = [
    ['garbage', /reply is not JSON \("<html>502 Bad Gateway<\/html>"\)/],
    ['huge', /frame over the 65536-byte cap; the session was dropped/],
    ['silent', /No answer to "step" within 1\.5 s; the session was dropped/],
    ['drop', /The server closed the session \(1006\)/],
    ['array', /not a JSON object/],
  ];
  for (const [mode, said] of broken) {
    it(`a /ws server that turns ${mode} mid-episode: a clear error, the turns before it kept`, async () => {
      const s = await WireSession.open(`${base}/${mode}/`, LIMITS);
      const ep = await playRemote(s, infoFor(mode), { seed: 1, hint: false, maxTurns: 5, actor: scriptedActor(['a', 'b', 'c', 'd', 'e']) });
      await s.close();
      expect(ep.endedBy).toBe('error');
      expect(ep.turns.slice(0, 3).map((t) => t.observation?.text)).toEqual(['start', 'turn 1', 'turn 2']);
      expect(ep.turns[3]!.error).toMatch(said);
      expect(ep.turns[3]!.text).toBe('c');
      // Nothing is asked of a dropped session again; it says why it is gone.
      if (mode !== 'array' && mode !== 'garbage') expect((await failure(s.state())).message).toMatch(said);
    });
  }

  it('drops a session whose server sends frames nobody asked for (they would pair with the wrong requests)', async () => {
    const s = await WireSession.open(`${base}/extra/`, LIMITS);
    await s.reset({});
    await s.step({ message: 'a' });
    await s.step({ message: 'b' });
    await s.step({ message: 'c' }).catch(() => null);
    await new Promise((ok) => setTimeout(ok, 200));
    expect(s.closed).toBe(true);
    expect((await failure(s.step({ message: 'd' }))).message).toMatch(/frame nobody asked for/);
  });

  it("passes on a server's refusal of the session in its own words", async () => {
    const s = await WireSession.open(`${base}/refuse/`, LIMITS);
    await new Promise((ok) => setTimeout(ok, 200));
    expect((await failure(s.reset({}))).message).toMatch(/refused the session: Server at capacity: 1\/1 sessions active \(code: CAPACITY_REACHED\)/);
  });

  it('a wire audit of a server that dies mid-episode fails its checks instead of hanging', async () => {
    const a = await auditWire(`${base}/huge-ws/`, { limits: LIMITS, seeds: [0, 1], actions: ['a', 'b', 'c'] });
    expect(a.verdict).toBe('fail');
    // /huge-ws/ has a healthy HTTP side and a /ws that is not there (404 on upgrade).
    expect(a.checks.find((c) => c.id === 'wire.determinism')!.message).toMatch(/Could not play seed 0: Cannot open a session/);
  });
});
