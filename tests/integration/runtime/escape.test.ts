import { createServer, type Server } from 'node:net';
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RuntimeService, RuntimeKind } from '../../../core/runtime/service';
import { probeNetworkNamespace, probePython } from '../../../core/runtime/native';
import type { HarnessReply } from '../../../core/runtime/types';
import { GUESS_GAME, makeRuntime } from './helpers';

/**
 * Environment code is written by a language model: each test here is an escape attempt. Every one
 * must be contained (refused, or run without reaching the host), and the runtime must serve the
 * next environment normally afterwards.
 */
const SECRET = `spade-secret-${process.pid}-${Date.now()}`;
process.env.SPADE_ESCAPE_TEST_SECRET = SECRET;
const target = join(tmpdir(), `spade-escape-${process.pid}`);

let rt: RuntimeService;
let server: Server;
let port = 0;
let connections = 0;

beforeAll(async () => {
  rt = makeRuntime({ stepTimeoutSec: 3, memoryMb: 900 });
  await rt.pool.start();
  server = createServer((sock) => {
    connections++;
    sock.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  await rt.shutdown();
  server.close();
  rmSync(target, { force: true });
});

function game(body: string, where: 'reset' | 'load' = 'reset'): string {
  const indented = body
    .trim()
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
  if (where === 'load') return `${body.trim()}\nclass AttemptEnv:\n    def reset(self, seed=None):\n        return "loaded", {}\n    def step(self, a):\n        return "o", 0.0, True, False, {}\n`;
  return `def attempt():\n${indented}\n\nclass AttemptEnv:\n    def reset(self, seed=None):\n        return repr(attempt()), {}\n    def step(self, a):\n        return "o", 0.0, True, False, {}\n`;
}

/** Runs an attempt; returns everything it produced as one string for leak checks. */
async function attempt(kind: RuntimeKind, body: string, where: 'reset' | 'load' = 'reset'): Promise<{ text: string; reply: HarnessReply | null; loadOk: boolean }> {
  const opened = await rt.open({ source: game(body, where), runtime: kind });
  // SPADE's load already runs reset (its validation), so an attempt in reset may end the load itself.
  if (!opened.ok) return { text: JSON.stringify(opened), reply: where === 'reset' ? { id: null, ok: false, error: opened.error, ...(opened.output ? { output: opened.output } : {}) } : null, loadOk: false };
  const reply = await rt.call(opened.sessionId, { cmd: 'reset', seed: 1 });
  await rt.close(opened.sessionId);
  return { text: JSON.stringify(reply), reply, loadOk: true };
}

async function healthy(kind: RuntimeKind): Promise<void> {
  const s = await rt.open({ source: GUESS_GAME, runtime: kind });
  expect(s.ok, JSON.stringify(s)).toBe(true);
  if (!s.ok) return;
  const r = await rt.call(s.sessionId, { cmd: 'play', seed: 1, actions: ['\\boxed{1}', '\\boxed{2}'] });
  expect(r.ok).toBe(true);
  await rt.close(s.sessionId);
}

function refused(a: { text: string; reply: HarnessReply | null; loadOk: boolean }): boolean {
  return !a.loadOk || (a.reply !== null && !a.reply.ok);
}

const kinds: RuntimeKind[] = probePython() ? ['pyodide', 'cpython'] : ['pyodide'];

describe.each(kinds)('escape attempts in %s', (kind) => {
  test('read /etc/passwd (plain open, io.FileIO, os.open)', async () => {
    for (const body of ['return open("/etc/passwd").read()', 'import io\nreturn io.FileIO("/etc/passwd").read()', 'import os\nfd = os.open("/etc/passwd", os.O_RDONLY)\nreturn os.read(fd, 4096)', 'import os\nreturn os.listdir("/etc")']) {
      const a = await attempt(kind, body);
      expect(a.text).not.toMatch(/root:x?:0:0/);
      expect(a.text).not.toContain('passwd"');
      expect(refused(a) || kind === 'pyodide').toBe(true);
    }
    await healthy(kind);
  });

  test('write a file on the host', async () => {
    for (const body of [`open(${JSON.stringify(target)}, "w").write("pwned")`, `import os\nfd = os.open(${JSON.stringify(target)}, os.O_CREAT | os.O_WRONLY)\nos.write(fd, b"x")`, `import pathlib\npathlib.Path(${JSON.stringify(target)}).write_text("x")`]) {
      await attempt(kind, body);
      expect(existsSync(target)).toBe(false);
    }
    await healthy(kind);
  });

  test('os.system and subprocess', async () => {
    const marker = `${target}-proc`;
    for (const body of [`import os\nreturn os.system("touch ${marker}")`, `import subprocess\nreturn subprocess.run(["touch", "${marker}"]).returncode`, `import os\nreturn os.popen("id").read()`, `import os\nreturn os.fork()`, `import os\nos.execv("/bin/sh", ["sh", "-c", "touch ${marker}"])`]) {
      const a = await attempt(kind, body);
      expect(refused(a), a.text).toBe(true);
      expect(a.text).not.toContain('uid=');
    }
    expect(existsSync(marker)).toBe(false);
    await healthy(kind);
  });

  test('a socket to a listener on 127.0.0.1', async () => {
    const before = connections;
    for (const body of [`import socket\ns = socket.create_connection(("127.0.0.1", ${port}), timeout=2)\nreturn "connected"`, `import _socket\ns = _socket.socket()\ns.connect(("127.0.0.1", ${port}))\nreturn "connected"`, `import urllib.request\nreturn urllib.request.urlopen("http://127.0.0.1:${port}/").read()`]) {
      const a = await attempt(kind, body);
      expect(a.text).not.toContain('connected');
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(connections).toBe(before);
    await healthy(kind);
  });

  test('read an environment variable holding a secret', async () => {
    for (const body of ['import os\nreturn dict(os.environ)', 'import os\nreturn os.getenv("SPADE_ESCAPE_TEST_SECRET")', 'return open("/proc/self/environ", "rb").read()', 'return open("/proc/" + str(__import__("os").getppid()) + "/environ", "rb").read()']) {
      const a = await attempt(kind, body);
      expect(a.text).not.toContain(SECRET);
    }
    await healthy(kind);
  });

  test('ctypes', async () => {
    const a = await attempt(kind, 'import ctypes\nreturn ctypes.CDLL(None).getpid()');
    expect(refused(a), a.text).toBe(true);
    await healthy(kind);
  });

  test('deep recursion (default limit, and the limit raised)', async () => {
    const a = await attempt(kind, 'def f(n):\n    return f(n + 1)\nreturn f(0)');
    expect(refused(a)).toBe(true);
    expect(a.text).toMatch(/RecursionError|recursion|stack|restarted|crashed/i);
    const b = await attempt(kind, 'import sys\nsys.setrecursionlimit(10**7)\ndef f(n):\n    return f(n + 1)\nreturn f(0)');
    expect(refused(b)).toBe(true);
    await healthy(kind);
  });

  test('an infinite loop, and one that swallows the interrupt', async () => {
    const a = await attempt(kind, 'while True:\n    pass');
    expect(a.reply?.ok).toBe(false);
    if (a.reply && !a.reply.ok) expect(a.reply.error.kind).toBe('timeout');
    await healthy(kind);
    const b = await attempt(kind, 'while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass');
    expect(b.reply?.ok).toBe(false);
    if (b.reply && !b.reply.ok) expect(b.reply.error.kind).toBe('timeout');
    await healthy(kind);
  });

  test('a memory bomb', async () => {
    const a = await attempt(kind, 'x = []\nwhile True:\n    x.append(bytearray(50 * 1024 * 1024))');
    expect(refused(a), a.text).toBe(true);
    expect(a.text).toMatch(/MemoryError|memory|restarted|timeout/i);
    await healthy(kind);
  });

  test('a flood of output is capped', async () => {
    // SPADE's load runs this reset twice more (its validation) within the same 3 s limit
    const a = await attempt(kind, 'for i in range(60000):\n    print("flood " * 20)\nreturn "done"');
    expect(a.reply?.ok).toBe(true);
    expect((a.reply?.output ?? '').length).toBeLessThan(70 * 1024);
    expect(a.reply?.output).toContain('output cut');
    const b = await attempt(kind, 'while True:\n    print("x" * 1000)');
    expect(b.reply?.ok).toBe(false);
    await healthy(kind);
  });

  test('patching shared modules does not reach the next game', async () => {
    const a = await rt.open({ source: game('import builtins, re, json\nbuiltins.len = lambda x: 0\nre.search = lambda *a, **k: None\njson.dumps = None\nbuiltins.planted = 1\nreturn "patched"'), runtime: kind });
    expect(a.ok).toBe(true);
    if (!a.ok) return;
    const patched = await rt.call(a.sessionId, { cmd: 'reset', seed: 1 });
    // the harness itself still answers while the game's patches are in place
    expect(patched.ok, JSON.stringify(patched)).toBe(true);
    const probe = game('import builtins\nreturn [len([1, 2]), re.search("a", "a") is not None, json.dumps(1), hasattr(builtins, "planted")]');
    const b = await rt.open({ source: probe, runtime: kind });
    expect(b.ok, JSON.stringify(b)).toBe(true);
    if (!b.ok) return;
    const r = await rt.call(b.sessionId, { cmd: 'reset', seed: 1 });
    expect(r.ok && (r.result as { observation: string }).observation).toBe("[2, True, '1', False]");
    await rt.close(a.sessionId);
    await rt.close(b.sessionId);
    await healthy(kind);
  });

  test('sys.exit and os._exit', async () => {
    const a = await attempt(kind, 'import sys\nsys.exit(3)');
    expect(a.reply?.ok).toBe(false);
    if (a.reply && !a.reply.ok) expect(a.reply.error.type).toBe('SystemExit');
    const b = await attempt(kind, 'import os\nos._exit(0)');
    expect(refused(b)).toBe(true);
    await healthy(kind);
  });
});

describe.runIf(probePython())('escape attempts specific to native CPython', () => {
  test('an endless line written straight to the session’s reply socket ends that session only', async () => {
    // The fork server relays each session's replies line by line; a line that never ends would
    // hold its memory, which every session depends on. 30 s: the flood must reach the cap, not the call limit.
    const own = makeRuntime({ stepTimeoutSec: 30, memoryMb: 900 });
    try {
      const flood = 'import os, stat\nfor fd in range(3, 256):\n    try:\n        if stat.S_ISSOCK(os.fstat(fd).st_mode):\n            block = b"x" * (1 << 20)\n            while True:\n                os.write(fd, block)\n    except OSError:\n        pass\nreturn "no socket found"';
      const opened = await own.open({ source: game(flood), runtime: 'cpython' });
      expect(opened.ok).toBe(false);
      if (!opened.ok) expect(opened.error.message).toContain('reply line over 256 MiB without ending it');
      const s = await own.open({ source: GUESS_GAME, runtime: 'cpython' });
      expect(s.ok, JSON.stringify(s)).toBe(true);
      if (!s.ok) return;
      const r = await own.call(s.sessionId, { cmd: 'play', seed: 1, actions: ['\\boxed{1}', '\\boxed{2}'] });
      expect(r.ok, JSON.stringify(r)).toBe(true);
    } finally {
      await own.shutdown();
    }
  });
});

describe('escape attempts specific to Pyodide', () => {
  test('an endless line written straight to fds 1 and 2 costs only its own call, not the interpreter’s other sessions', async () => {
    const other = await rt.open({ source: GUESS_GAME, runtime: 'pyodide' });
    expect(other.ok, JSON.stringify(other)).toBe(true);
    if (!other.ok) return;
    // One interpreter process here (pool of 1): the flood runs beside the other session.
    const a = await attempt('pyodide', 'import os\nblock = b"x" * (1 << 20)\nwhile True:\n    os.write(2, block)\n    os.write(1, block)');
    expect(refused(a), a.text).toBe(true);
    expect(a.text).not.toMatch(/crashed|replaced|restarted/);
    const r = await rt.call(other.sessionId, { cmd: 'play', seed: 1, actions: ['\\boxed{1}', '\\boxed{2}'] });
    expect(r.ok, JSON.stringify(r)).toBe(true);
    await rt.close(other.sessionId);
  });

  test('import js / pyodide_js and the host JavaScript through any JsProxy', async () => {
    for (const body of ['import js\nreturn js.process.pid', 'import pyodide_js\nreturn pyodide_js._module', 'import sys\nreturn [k for k in sys.modules if k == "js" or k.startswith(("pyodide", "_pyodide"))]', 'from pyodide.code import run_js\nreturn run_js("process.pid")', 'import _pyodide_core\nreturn dir(_pyodide_core)']) {
      const a = await attempt('pyodide', body);
      const obs = a.reply?.ok ? (a.reply.result as { observation: unknown }).observation : null;
      expect(refused(a) || obs === '[]', a.text).toBe(true);
    }
    // Walk every reachable function's globals for a JsProxy, then try the Function constructor.
    const walk = String.raw`
found = []
seen = set()
def visit(cls):
    for sub in type.__subclasses__(cls):
        if id(sub) in seen:
            continue
        seen.add(id(sub))
        if "JsProxy" in sub.__name__ or "Js" in sub.__name__:
            found.append("class:" + sub.__name__)
        try:
            members = list(vars(sub).values())
        except Exception:
            members = []
        for v in members:
            g = getattr(v, "__globals__", None)
            if isinstance(g, dict):
                for x in list(g.values()):
                    if "JsProxy" in type(x).__name__ and not isinstance(x, type) and not any(x is y for y in found):
                        found.append(x)
        visit(sub)
visit(object)
results = []
for p in found:
    if isinstance(p, str):
        continue
    for attempt_code in ("return process.pid", "return globalThis.process.env"):
        try:
            results.append(str(p.constructor.constructor(attempt_code)()))
        except BaseException as e:
            results.append("blocked:" + type(e).__name__ + ":" + str(e)[:80])
return {"classes": len([f for f in found if isinstance(f, str)]), "proxies": [repr(f)[:60] for f in found if not isinstance(f, str)], "results": results}`;
    const a = await attempt('pyodide', walk);
    expect(a.reply?.ok, a.text).toBe(true);
    // No JavaScript object is reachable from Python at all (and were one found, code generation is off).
    expect(a.text).toContain("'proxies': []");
    expect(a.text).not.toContain(SECRET);
    expect(a.text).not.toMatch(/'results': \[[^\]]*'\d+'/);
    for (const m of a.text.matchAll(/'(blocked:[^']*)'/g)) expect(m[1]).toMatch(/EvalError|Code generation|blocked/);
    await healthy('pyodide');
  });

  test('the pool reports restarts and stays healthy after a kill', async () => {
    const before = rt.pool.status().restarted;
    const s = await rt.open({ source: GUESS_GAME, runtime: 'pyodide' });
    expect(s.ok).toBe(true);
    if (!s.ok) return;
    rt.pool.killSessionWorker(s.sessionId);
    const r = await rt.call(s.sessionId, { cmd: 'reset', seed: 1 });
    expect(r.ok).toBe(false);
    expect(rt.pool.status().restarted).toBe(before + 1);
    await healthy('pyodide');
  });
});

describe.runIf(probePython())('native CPython: what isolation is applied', () => {
  test('resource limits, scrubbed environment and (where allowed) no network namespace access', async () => {
    const r = await rt.native.oneShot({ cmd: 'ping' });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const info = r.result as { limits: Record<string, unknown>; network: string };
    expect(info.limits.RLIMIT_AS).toBeGreaterThan(0);
    expect(info.limits.RLIMIT_FSIZE).toBe(0);
    expect(info.limits.RLIMIT_CPU).toBeGreaterThan(0);
    expect(info.network).toBe(probeNetworkNamespace() ? 'isolated' : 'host');
    expect(rt.status().native.isolation.network).toBe(probeNetworkNamespace() ? 'namespace' : 'not applied');
  });
});
