import WebSocket from 'ws';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../../core/host/startApp';
import { tempDir } from '../helpers/tmp';

const running: { app: RunningApp; cleanup(): void }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.app.close();
    r.cleanup();
  }
});

async function start(opts: Partial<Parameters<typeof startApp>[0]> = {}): Promise<RunningApp> {
  const tmp = tempDir();
  const app = await startApp({ dataDir: tmp.dir, port: 0, ...opts });
  running.push({ app, cleanup: tmp.cleanup });
  return app;
}

function get(port: number, path: string, headers: Record<string, string> = {}, method = 'GET', body?: string, host = '127.0.0.1'): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path, method, headers }, (res) => {
      let data = '';
      res.on('data', (c) => (data += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function wsOpens(url: string, headers: Record<string, string> = {}): Promise<boolean> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => {
      ws.close();
      resolve(true);
    });
    ws.on('error', () => resolve(false));
  });
}

/** n plain TCP connections; `closedWithin` waits until `want` of them were closed by the server (or the time is up), then drops them all. */
async function rawSockets(port: number, n: number, onConnect: (s: Socket) => void = () => {}) {
  const sockets: Socket[] = [];
  let closed = 0;
  await Promise.all(
    Array.from({ length: n }, () =>
      new Promise<void>((resolve) => {
        const s = connect(port, '127.0.0.1', () => {
          onConnect(s);
          resolve();
        });
        s.on('error', () => {});
        s.resume(); // read the server's reply and FIN, or 'close' never comes
        s.on('close', () => {
          closed++;
          resolve();
        });
        sockets.push(s);
      }),
    ),
  );
  return {
    async closedWithin(want: number, ms: number): Promise<number> {
      const until = Date.now() + ms;
      while (closed < want && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      const seen = closed;
      for (const s of sockets) s.destroy();
      return seen;
    },
  };
}

describe('web host', () => {
  it('serves the renderer with a strict CSP and refuses path traversal', async () => {
    const app = await start();
    const page = await get(app.host.port, '/');
    expect(page.status).toBe(200);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(csp).toContain("worker-src 'self'");
    expect(page.body).not.toMatch(/<script>(?!<\/script>)/); // no inline script bodies
    expect((await get(app.host.port, '/../../../etc/passwd')).body).not.toContain('root:');
    expect((await get(app.host.port, '/%2e%2e/%2e%2e/etc/passwd')).body).not.toContain('root:');
  });

  it('answers the contract over HTTP POST with typed errors', async () => {
    const app = await start();
    const ok = await get(app.host.port, '/api/call/app.info', { 'content-type': 'application/json' }, 'POST', '{}');
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toMatchObject({ ok: true, value: { name: 'SPADE Workbench', shell: 'web' } });
    const bad = await get(app.host.port, '/api/call/settings.update', {}, 'POST', '{"theme": 7}');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.code).toBe('invalid_input');
    const notJson = await get(app.host.port, '/api/call/app.info', {}, 'POST', '{nope');
    expect(JSON.parse(notJson.body).error.code).toBe('invalid_input');
  });

  it('refuses foreign Host headers (DNS rebinding) and cross-origin sockets and posts', async () => {
    const app = await start();
    const port = app.host.port;
    expect((await get(port, '/', { host: `evil.example:${port}` })).status).toBe(421);
    expect(await wsOpens(`ws://127.0.0.1:${port}/api/ws`)).toBe(true);
    expect(await wsOpens(`ws://127.0.0.1:${port}/api/ws`, { origin: 'http://evil.example' })).toBe(false);
    expect(await wsOpens(`ws://127.0.0.1:${port}/api/ws`, { origin: `http://127.0.0.1:${port}` })).toBe(true);
    const post = await get(port, '/api/call/app.info', { origin: 'http://evil.example' }, 'POST', '{}');
    expect(post.status).toBe(403);
  });

  it('refuses a non-loopback bind unless --host is explicit, and then requires the token', async () => {
    await expect(start({ host: '0.0.0.0' })).rejects.toThrow(/only loopback/);
    const app = await start({ host: '0.0.0.0', hostExplicit: true });
    const token = app.host.token;
    expect(token).toMatch(/^[0-9a-f]{48}$/);
    expect(app.host.url).toContain(`token=${token}`);
    const port = app.host.port;
    expect((await get(port, '/')).status).toBe(401);
    expect((await get(port, '/?token=wrong')).status).toBe(401);
    const withToken = await get(port, `/?token=${token}`);
    expect(withToken.status).toBe(200);
    expect(String(withToken.headers['set-cookie'])).toContain('HttpOnly');
    expect((await get(port, '/', { cookie: `spade_token=${token}` })).status).toBe(200);
    expect(await wsOpens(`ws://127.0.0.1:${port}/api/ws`)).toBe(false);
    expect(await wsOpens(`ws://127.0.0.1:${port}/api/ws?token=${token}`)).toBe(true);
  });

  it('answers not_found with 404 and a malformed %-escape in the call name with 400', async () => {
    const app = await start();
    const missing = await get(app.host.port, '/api/call/memory.get', {}, 'POST', '{"id": 987654}');
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body).error.code).toBe('not_found');
    const malformed = await get(app.host.port, '/api/call/memory.%E0%A4%A', {}, 'POST', '{}');
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.body).error.code).toBe('invalid_input');
    expect((await get(app.host.port, '/api/call/no.such', {}, 'POST', '{}')).status).toBe(400);
  });

  it('gates another loopback address (--host 127.0.0.2) by a token and accepts its own Host header', async () => {
    const app = await start({ host: '127.0.0.2', hostExplicit: true });
    const token = app.host.token;
    expect(token).toMatch(/^[0-9a-f]{48}$/);
    const port = app.host.port;
    expect((await get(port, '/', {}, 'GET', undefined, '127.0.0.2')).status).toBe(401);
    const viaQuery = await get(port, `/api/call/app.info?token=${token}`, {}, 'POST', '{}', '127.0.0.2');
    expect(viaQuery.status).toBe(200);
    const call = await get(port, '/api/call/app.info', { authorization: `Bearer ${token}` }, 'POST', '{}', '127.0.0.2');
    expect(call.status).toBe(200);
    // Still no DNS rebinding: a foreign name is refused even with the token.
    expect((await get(port, `/?token=${token}`, { host: `evil.example:${port}` }, 'GET', undefined, '127.0.0.2')).status).toBe(421);
  });

  it('drops 1,000 half-open requests once the header timeout passes instead of holding them for a minute', async () => {
    const app = await start();
    const port = app.host.port;
    const raw = await rawSockets(port, 1000, (s) => s.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Slow: `)); // never finished
    // Default header timeout is 10 s; give it 25 s (the old server kept them past 60 s).
    expect(await raw.closedWithin(1000, 25_000)).toBe(1000);
    expect((await get(port, '/api/call/app.info', {}, 'POST', '{}')).status).toBe(200);
  }, 60_000);

  it('caps concurrent connections so nobody can exhaust the descriptors', async () => {
    const app = await start({ limits: { maxConnections: 20 } });
    const raw = await rawSockets(app.host.port, 60);
    expect(await raw.closedWithin(40, 5_000)).toBe(40);
  });
});
