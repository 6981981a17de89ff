/**
 * serve-env against bad input and a hostile game: every mistake gets OpenEnv's error shape (HTTP
 * `{"detail"}` with FastAPI's status, /ws `{"type": "error", "data": {"message", "code"}}`), too
 * many sessions get CAPACITY_REACHED, a game that tries to kill the server or write outside its
 * sandbox fails, and the server keeps answering throughout. The web host's token rule holds.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp';
import { ROOT, runCli, serveEnv, session, type Served } from './serveEnvHelpers';

const GAME = join(ROOT, 'resources', 'seed-pack', 'games', 'game_00000_001_pattern_recognition.py');
const tmp = tempDir('spade-serve-env-abuse-');
const data = join(tmp.dir, 'data');
const MARKER = join(tmp.dir, 'escaped.txt');

// Tries, at every reset and step, to kill the server (its parent, and every process whose command
// line names serve-env) and to write a file outside its sandbox; says what worked.
const HOSTILE = `import os, signal

MARKER = ${JSON.stringify(MARKER)}


class HostileEnv:
    def __init__(self):
        self.n = 0

    def _attack(self):
        got = []
        try:
            os.kill(os.getppid(), signal.SIGKILL)
            got.append("killed parent")
        except Exception as e:
            got.append("parent " + type(e).__name__)
        try:
            for pid in os.listdir("/proc"):
                if pid.isdigit():
                    try:
                        with open("/proc/%s/cmdline" % pid, "rb") as f:
                            cmd = f.read()
                    except Exception:
                        continue
                    if b"serve-env" in cmd:
                        os.kill(int(pid), signal.SIGKILL)
                        got.append("killed " + pid)
        except Exception as e:
            got.append("proc " + type(e).__name__)
        try:
            with open(MARKER, "w") as f:
                f.write("escaped")
            got.append("wrote")
        except Exception as e:
            got.append("write " + type(e).__name__)
        return got

    def reset(self, seed=None):
        self.n = 0
        return "attacks: " + ", ".join(self._attack()), {}

    def step(self, action):
        self.n += 1
        if "exit" in action:
            os._exit(3)
        return "again: " + ", ".join(self._attack()), 0.0, self.n >= 3, False, {}

    def solution(self):
        return "none"
`;

let server: Served;

beforeAll(async () => {
  const hostile = join(tmp.dir, 'game_hostile.py');
  writeFileSync(hostile, HOSTILE);
  for (const f of [GAME, hostile]) {
    const r = await runCli(['import', f, '--data-dir', data, '--quiet']);
    expect(r.code, r.err).toBe(0);
  }
  server = await serveEnv(['1', '2', '--data-dir', data, '--seeds', '2', '--hint', 'off', '--concurrency', '2', '--runtime', 'cpython']);
});
afterAll(async () => {
  await server?.stop();
  tmp.cleanup();
});

async function healthy(s: Served): Promise<void> {
  expect(s.child.exitCode).toBeNull();
  const r = await fetch(`${s.url}/health`);
  expect(await r.json()).toEqual({ status: 'healthy' });
}

const errorCode = (f: Record<string, unknown>) => (f.type === 'error' ? (f.data as { code: string }).code : `not an error: ${JSON.stringify(f).slice(0, 200)}`);

describe('serve-env under bad input', () => {
  it('answers malformed, unknown and out-of-order /ws messages with OpenEnv errors and keeps the session', async () => {
    const s = await session(server.url);
    expect(errorCode(await s.ask('{not json'))).toBe('INVALID_JSON');
    expect(errorCode(await s.ask({ type: 'dance' }))).toBe('UNKNOWN_TYPE');
    expect(errorCode(await s.ask([1, 2]))).toBe('UNKNOWN_TYPE');
    expect(errorCode(await s.ask({ type: 'step', data: { message: '\\boxed{1}' } }))).toBe('EXECUTION_ERROR');
    expect(errorCode(await s.ask({ type: 'reset', data: { env: 'no-such-game' } }))).toBe('EXECUTION_ERROR');
    expect(errorCode(await s.ask({ type: 'reset', data: { task_id: 'zzz:0:hint' } }))).toBe('EXECUTION_ERROR');
    expect(errorCode(await s.ask({ type: 'reset', data: { seed: -1 } }))).toBe('VALIDATION_ERROR');
    expect(errorCode(await s.ask({ type: 'reset', data: {}, extra: 1 }))).toBe('VALIDATION_ERROR');
    expect(errorCode(await s.ask({ type: 'reset', data: { hint: true } }))).toBe('EXECUTION_ERROR'); // --hint off
    const r = await s.ask({ type: 'reset', data: { task_id: 0 } });
    expect(r.type).toBe('observation');
    expect(errorCode(await s.ask({ type: 'step', data: { msg: 'x' } }))).toBe('VALIDATION_ERROR');
    expect(errorCode(await s.ask({ type: 'step', data: { message: 7 } }))).toBe('VALIDATION_ERROR');
    const st = await s.ask({ type: 'step', data: { message: '\\boxed{1}' } });
    expect(st.type).toBe('observation');
    const mcp = await s.ask({ type: 'mcp', data: { jsonrpc: '2.0', method: 'tools/list', id: 4 } });
    expect(mcp).toMatchObject({ type: 'mcp', data: { jsonrpc: '2.0', id: 4, error: { code: -32603 } } });
    s.ws.close();
    await s.closed;
    await healthy(server);
  });

  it('answers bad HTTP requests with FastAPI-shaped errors', async () => {
    const post = (path: string, body: string) => fetch(`${server.url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    const bad = await post('/reset', '{"seed": "x"}');
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { detail: { loc: unknown[] }[] }).detail[0]!.loc).toEqual(['body', 'seed']);
    expect((await post('/reset', '{oops')).status).toBe(422);
    const unknown = await post('/reset', '{"env": "no-such-game"}');
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { detail: string }).detail).toMatch(/No served environment/);
    expect((await post('/step', '{"action": {"nope": 1}}')).status).toBe(422);
    expect((await post('/step', '{"action": {"message": "\\\\boxed{1}"}}')).status).toBe(409);
    expect((await fetch(`${server.url}/nowhere`)).status).toBe(404);
    expect((await fetch(`${server.url}/reset`)).status).toBe(405);
    const rpc = (await (await post('/mcp', '{not json')).json()) as { jsonrpc: string; error: { code: number } };
    expect(rpc).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
    const ok = await post('/reset', '{"seed": 1}');
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { done: boolean }).done).toBe(false);
    await healthy(server);
  });

  it('refuses a session past --concurrency with CAPACITY_REACHED and takes one again when a slot frees', async () => {
    const a = await session(server.url);
    const b = await session(server.url);
    const c = await session(server.url);
    const refused = await c.next();
    expect(errorCode(refused)).toBe('CAPACITY_REACHED');
    expect(refused.data).toMatchObject({ max_sessions: 2 });
    await c.closed;
    // A stateless HTTP /reset costs an interpreter too: refused while the slots are taken.
    const busy = await fetch(`${server.url}/reset`, { method: 'POST', body: '{}' });
    expect(busy.status).toBe(503);
    expect(((await busy.json()) as { detail: string }).detail).toMatch(/capacity/);
    a.ws.close();
    await a.closed;
    await new Promise((r) => setTimeout(r, 100));
    const d = await session(server.url);
    expect((await d.ask({ type: 'reset', data: { seed: 0 } })).type).toBe('observation');
    b.ws.close();
    d.ws.close();
    await Promise.all([b.closed, d.closed]);
    await healthy(server);
  });

  it('cuts off a client that floods messages without reading the answers, and lives', async () => {
    const s = await session(server.url);
    const closedWith = new Promise<number>((done) => s.ws.once('close', (code) => done(code)));
    for (let i = 0; i < 400; i++) s.ws.send(JSON.stringify({ type: 'reset', data: { seed: i } }));
    expect(await closedWith).toBe(1008);
    await healthy(server);
    const n = await session(server.url);
    expect((await n.ask({ type: 'reset', data: { seed: 0 } })).type).toBe('observation');
    n.ws.close();
    await n.closed;
  });

  it('exits with its error, leaving nothing running, when there is nothing to serve or the port is taken', async () => {
    const none = await runCli(['serve-env', '--selection', 'zebrafish-matches-nothing', '--data-dir', data, '--port', '0']);
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/No environment to serve matches/);
    const unknown = await runCli(['serve-env', '999', '--data-dir', data, '--port', '0']);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/No environment 999/);
    const taken = await runCli(['serve-env', '1', '--data-dir', data, '--port', String(server.port), '--runtime', 'cpython']);
    expect(taken.code).toBe(1);
    expect(taken.err).toMatch(/EADDRINUSE/);
    await healthy(server);
  });

  it("refuses another Host, a browser's cross-origin socket, and a bind elsewhere without its token", async () => {
    const wrongHost = await new Promise<number>((done) => {
      void import('node:http').then(({ request }) => {
        const req = request({ host: '127.0.0.1', port: server.port, path: '/health', headers: { host: 'evil.example' } }, (res) => done(res.statusCode ?? 0));
        req.end();
      });
    });
    expect(wrongHost).toBe(421);
    await expect(session(server.url, { origin: 'http://evil.example' })).rejects.toThrow(/403/);
    const other = await serveEnv(['1', '--data-dir', data, '--host', '127.0.0.2', '--runtime', 'cpython']);
    try {
      expect(other.token).toMatch(/^[0-9a-f]{48}$/);
      expect((await fetch(`${other.url}/health`)).status).toBe(401);
      expect((await fetch(`${other.url}/health`, { headers: { authorization: `Bearer ${other.token}` } })).status).toBe(200);
      await expect(session(other.url)).rejects.toThrow(/403/);
      const s = await session(other.url, { authorization: `Bearer ${other.token}` });
      expect((await s.ask({ type: 'reset', data: { seed: 0 } })).type).toBe('observation');
      s.ws.close();
    } finally {
      await other.stop();
    }
  });
});

describe('serve-env against a hostile game', () => {
  it('keeps the server alive and the host untouched when the game tries to kill it and write outside', async () => {
    const s = await session(server.url);
    const r = await s.ask({ type: 'reset', data: { env: 'HostileEnv', seed: 0 } });
    expect(r.type, JSON.stringify(r)).toBe('observation');
    const text = String((r.data as { observation: { text: string } }).observation.text);
    expect(text).toMatch(/^attacks: /);
    // Each attack was made, and the sandbox refused it.
    expect(text).toMatch(/parent \w+Error/);
    expect(text).toMatch(/write \w+Error/);
    expect(text).not.toMatch(/killed|wrote/);
    const st = await s.ask({ type: 'step', data: { message: 'go' } });
    expect(String((st.data as { observation: { text: string } }).observation.text)).not.toMatch(/killed|wrote/);
    // A game that ends its interpreter: the step is an error episode (SPADE's -1, terminated) or OpenEnv's error, never a dead server.
    const dead = await s.ask({ type: 'step', data: { message: 'exit now' } });
    expect(['observation', 'error']).toContain(dead.type);
    s.ws.close();
    await s.closed;
    expect(existsSync(MARKER)).toBe(false);
    await healthy(server);
    // And the next session plays an ordinary game as before.
    const n = await session(server.url);
    const ok = await n.ask({ type: 'reset', data: { env: 'SequencePatternEnv', seed: 1 } });
    expect(ok.type).toBe('observation');
    expect((await n.ask({ type: 'step', data: { message: '\\boxed{1}' } })).type).toBe('observation');
    n.ws.close();
    await healthy(server);
  });
});
