import { createServer, type Server } from 'node:net';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AuditPool } from '../../../core/audit/pool';
import { NativeRuntime, probePython } from '../../../core/runtime/native';
import { probeOsSandbox } from '../../../core/runtime/osSandbox';
import type { RuntimeKind, RuntimeService } from '../../../core/runtime/service';
import { GUESS_GAME, makeRuntime } from '../runtime/helpers';

/**
 * Issue 12's attack classes, each tried as a hostile environment would. After each attempt: no
 * effect on the host (files, sockets, processes), and a clean game run next gives exactly the trace
 * of a fresh run. Native CPython runs inside bubblewrap with a seccomp filter per session; the same
 * attacks also run with the in-process audit hook turned off, to show the OS walls hold alone.
 */
const sandboxed = probeOsSandbox().available && !!probePython();
const host = mkdtempSync(join(tmpdir(), 'spade-sec-'));
const victim = join(host, 'victim.txt');
const sockPath = join(host, 'host.sock');
let unixServer: Server;
let unixConnections = 0;

beforeAll(async () => {
  writeFileSync(victim, 'original contents\n');
  unixServer = createServer((s) => {
    unixConnections++;
    s.destroy();
  });
  await new Promise<void>((r) => unixServer.listen(sockPath, r));
});
afterAll(() => {
  unixServer.close();
  rmSync(host, { recursive: true, force: true });
});

function gameWith(body: string): string {
  const indented = body
    .trim()
    .split('\n')
    .map((l) => `        ${l}`)
    .join('\n');
  return `import os, sys\nclass AttackEnv:\n    def reset(self, seed=None):\n        out = []\n        def attempt():\n${indented.replace(/^ {8}/gm, '            ')}\n        try:\n            out.append(repr(attempt()))\n        except BaseException as e:\n            out.append(type(e).__name__ + ": " + str(e)[:200])\n        return " | ".join(out), {}\n    def step(self, action):\n        return "ok", 1.0, True, False, {}\n`;
}

/** The attacks, by class. Each body is the inside of a function whose result is reported. */
const ATTACKS: Record<string, string> = {
  'guard globals': `import sandbox\nsandbox.DENIED_PREFIXES = ()\nsandbox.BLOCKED_MODULES = frozenset()\nreturn open("/etc/passwd").read()[:40]`,
  'patched stdlib the guard relied on': `import posixpath\nposixpath.abspath = lambda p: "/usr/lib/x"\nposixpath.realpath = lambda p, **k: "/usr/lib/x"\nreturn open(${JSON.stringify(victim)}).read()`,
  'read secrets': `return [open(p).read()[:40] for p in ("/etc/shadow", "/root/.bashrc", ${JSON.stringify(victim)})]`,
  'fifo and mknod': `os.mkfifo(${JSON.stringify(join(host, 'fifo'))})\nreturn "made"`,
  'mknod through posix': `import posix\nposix.mknod(${JSON.stringify(join(host, 'node'))})\nreturn "made"`,
  'mmap write': `import mmap\nf = open(${JSON.stringify(victim)}, "r+b")\nm = mmap.mmap(f.fileno(), 0)\nm[0:8] = b"HACKED!!"\nreturn "written"`,
  'unlink and truncate': `import posix\nposix.truncate(${JSON.stringify(victim)}, 0)\nposix.unlink(${JSON.stringify(victim)})\nreturn "gone"`,
  'subprocess as root': `import subprocess\nreturn subprocess.run(["/bin/sh", "-c", "id"], capture_output=True).stdout`,
  'fork through posix': `import posix\npid = posix.fork()\nif pid == 0:\n    posix._exit(0)\nreturn pid`,
  'ctypes': `import ctypes\nreturn ctypes.CDLL(None).getpid()`,
  'unix socket to the host': `import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect(${JSON.stringify(sockPath)})\nreturn "connected"`,
  'detached process': `import posix\nif posix.fork() == 0:\n    posix.setsid()\n    import time\n    time.sleep(600)\nreturn "spawned"`,
  // Up the call stack to the harness's frames, for the handles they hold (its `os`), then a write.
  'frame walking': `try:\n    raise RuntimeError\nexcept RuntimeError as e:\n    f = e.__traceback__.tb_frame\nwhile f is not None:\n    o = f.f_globals.get("os")\n    if o is not None and f.f_globals.get("__name__") != "dynamic_game":\n        fd = o.open(${JSON.stringify(victim)}, o.O_RDWR)\n        o.write(fd, b"HACKED!!")\n        return "written"\n    f = f.f_back\nreturn "no handle found"`,
  'fork flood': `import posix\nn = 0\nfor i in range(200):\n    try:\n        if posix.fork() == 0:\n            import time\n            time.sleep(600)\n        n += 1\n    except OSError:\n        pass\nreturn n`,
};

/** Processes on the host whose command line names the marker (orphans of an attack). */
function orphans(marker: string): number {
  const r = spawnSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
  return r.stdout.split('\n').filter((l) => l.includes(marker) && !l.includes('ps -eo')).length;
}

function hostUntouched(): void {
  expect(readFileSync(victim, 'utf8')).toBe('original contents\n');
  expect(existsSync(join(host, 'fifo'))).toBe(false);
  expect(existsSync(join(host, 'node'))).toBe(false);
  expect(unixConnections).toBe(0);
  expect(statSync(victim).size).toBe(18);
}

async function cleanTrace(rt: NativeRuntime | RuntimeService, kind: RuntimeKind): Promise<unknown> {
  const actions = ['\\boxed{1}', '\\boxed{2}', '\\boxed{3}', '\\boxed{4}'];
  if (rt instanceof NativeRuntime) {
    const id = `clean-${Math.random().toString(36).slice(2)}`;
    const opened = await rt.open(id, { cmd: 'load', source: GUESS_GAME, options: { deterministic: true } });
    expect(opened.ok, JSON.stringify(opened)).toBe(true);
    const r = await rt.call(id, { cmd: 'play', seed: 7, actions });
    await rt.close(id);
    return r.ok ? r.result : r;
  }
  const opened = await rt.open({ source: GUESS_GAME, runtime: kind });
  expect(opened.ok, JSON.stringify(opened)).toBe(true);
  if (!opened.ok) return null;
  const r = await rt.call(opened.sessionId, { cmd: 'play', seed: 7, actions });
  await rt.close(opened.sessionId);
  return r.ok ? r.result : r;
}

for (const hook of [true, false]) {
  describe.runIf(sandboxed)(`native CPython in bubblewrap${hook ? '' : ', with the in-process guard off'}`, () => {
    const rt = new NativeRuntime({ timeoutMs: () => 10_000, ...(hook ? {} : { auditHook: false }) });
    let fresh: unknown;
    beforeAll(async () => {
      fresh = await cleanTrace(rt, 'cpython');
    });
    afterAll(() => rt.shutdown());

    for (const [name, body] of Object.entries(ATTACKS)) {
      test(name, async () => {
        const marker = `spade-attack-${Math.random().toString(36).slice(2)}`;
        const id = `atk-${marker}`;
        const opened = await rt.open(id, { cmd: 'load', source: `# ${marker}\n${gameWith(body)}` });
        expect(opened.ok, JSON.stringify(opened)).toBe(true);
        const r = await rt.call(id, { cmd: 'reset', seed: 1 });
        const text = JSON.stringify(r);
        // The attempt came back refused (an error inside the game), never as success.
        expect(text).not.toMatch(/root:x:0|HACKED|"connected"|'made'|'gone'|'written'|uid=0|'spawned'/);
        if (hook) expect(rt.violations(id).length, `${name}: ${text}`).toBeGreaterThan(0);
        await rt.close(id);
        hostUntouched();
        await new Promise((res) => setTimeout(res, 100));
        expect(orphans(marker)).toBe(0);
        expect(await cleanTrace(rt, 'cpython')).toEqual(fresh);
      });
    }

    test('the session runs as an unprivileged uid with no network and its own process tree', async () => {
      const r = await rt.oneShot({ cmd: 'ping' });
      expect(r.ok, JSON.stringify(r)).toBe(true);
      const info = (r.ok ? r.result : {}) as { uid: number; network: string; seccomp: string; pid: number };
      expect(info.uid).toBe(65534);
      expect(info.network).toBe('isolated');
      expect(info.seccomp).toBe('on');
      expect(info.pid).toBeLessThan(100); // a pid namespace of its own
    });
  });
}

// The same attacks in the Pyodide sandbox (the app's default runtime): WebAssembly, an empty `js`
// module and Node's permission model are its walls; the audit hook reports what it refused.
describe('Pyodide sandbox', () => {
  const rt = makeRuntime({ stepTimeoutSec: 10 });
  let fresh: unknown;
  beforeAll(async () => {
    fresh = await cleanTrace(rt, 'pyodide');
  }, 120_000);
  afterAll(() => rt.shutdown());

  for (const [name, body] of Object.entries(ATTACKS)) {
    test(name, async () => {
      const opened = await rt.open({ source: gameWith(body), runtime: 'pyodide' });
      expect(opened.ok, JSON.stringify(opened)).toBe(true);
      if (!opened.ok) return;
      const r = await rt.call(opened.sessionId, { cmd: 'reset', seed: 1 });
      const text = JSON.stringify(r);
      expect(text).not.toMatch(/root:x:0|HACKED|"connected"|'made'|'gone'|'written'|uid=0|'spawned'/);
      await rt.close(opened.sessionId);
      hostUntouched();
      expect(await cleanTrace(rt, 'pyodide')).toEqual(fresh);
    });
  }
});

describe.runIf(sandboxed)('integrity across environments', () => {
  const POISON = `import sys
class PoisonEnv:
    def reset(self, seed=None):
        h = sys.modules.get("harness")
        if h is not None:
            real = h.describe_step
            def forged(ret):
                d = real(ret)
                if isinstance(d, dict) and "reward" in d:
                    d["reward"] = 777
                return d
            h.describe_step = forged
        return "poisoned", {}
    def step(self, action):
        return "o", 0.0, True, False, {}
`;
  for (const kind of ['cpython', 'pyodide'] as RuntimeKind[]) {
    test(`${kind}: a game that patches the harness cannot change the next environment's trace`, async () => {
      const rt = makeRuntime({ stepTimeoutSec: 10 });
      try {
        const fresh = await cleanTrace(rt, kind);
        const p = await rt.open({ source: POISON, runtime: kind });
        expect(p.ok, JSON.stringify(p)).toBe(true);
        if (p.ok) {
          await rt.call(p.sessionId, { cmd: 'reset', seed: 1 });
          await rt.close(p.sessionId);
        }
        const after = await cleanTrace(rt, kind);
        expect(JSON.stringify(after)).not.toContain('777');
        expect(after).toEqual(fresh);
      } finally {
        await rt.shutdown();
      }
    });
  }
});

describe.runIf(sandboxed)('the sandbox audit check', () => {
  const pool = new AuditPool({ workers: 1, envTimeoutSec: 30 });
  afterAll(() => pool.close());
  const PROBING = `import os
class ProbeEnv:
    def __init__(self):
        self.n = 0
    def reset(self, seed=None):
        for f in (lambda: open("/etc/hostname").read(), lambda: os.system("id"), lambda: __import__("subprocess"), lambda: __import__("socket")):
            try:
                f()
            except Exception:
                pass
        self.n = 0
        return "Say \\\\boxed{yes}", {}
    def step(self, action):
        self.n += 1
        won = "yes" in action
        return ("won" if won else "no"), (1.0 if won else 0.0), won or self.n >= 5, False, {}
    def solution(self):
        return "yes"
`;
  test('an environment that tries forbidden operations fails it, each attempt as evidence', async () => {
    const a = await pool.audit(PROBING, {});
    const c = a.checks.find((x) => x.id === 'sandbox');
    expect(c?.status, JSON.stringify(a.checks)).toBe('fail');
    const attempts = (c?.evidence.attempts ?? []) as { event: string; detail: string }[];
    const events = attempts.map((x) => x.event);
    expect(events).toContain('open');
    expect(events).toContain('os.system');
    expect(events).toContain('import');
    expect(JSON.stringify(attempts)).toContain('/etc/hostname');
  });
  test('a clean environment passes it', async () => {
    const a = await pool.audit(GUESS_GAME, {});
    expect(a.checks.find((x) => x.id === 'sandbox')?.status).toBe('pass');
  });
});

describe('no OS sandbox: native runs are refused unless allowed', () => {
  test('one clear sentence naming the setting, and the runtime says so', async () => {
    const saved = process.env.SPADE_BWRAP;
    process.env.SPADE_BWRAP = join(host, 'no-bwrap-here');
    probeOsSandbox(true);
    try {
      const rt = new NativeRuntime();
      const r = await rt.open('refused', { cmd: 'load', source: GUESS_GAME });
      expect(r.ok).toBe(false);
      const msg = r.ok ? '' : r.error.message;
      expect(msg).toMatch(/^Native CPython runs are refused: bubblewrap \(bwrap\) is not installed/);
      expect(msg).toContain('allowUnsandboxedNative');
      expect(rt.isolation().sandbox).toBe('refused');
      const allowed = new NativeRuntime({ allowUnsandboxed: () => true });
      expect(allowed.isolation().sandbox).toBe('none');
      expect(allowed.isolation().sandboxDetail).toMatch(/NOT sandboxed/);
      if (probePython()) {
        const ok = await allowed.open('allowed', { cmd: 'load', source: GUESS_GAME });
        expect(ok.ok, JSON.stringify(ok)).toBe(true);
      }
      await allowed.shutdown();
    } finally {
      if (saved === undefined) delete process.env.SPADE_BWRAP;
      else process.env.SPADE_BWRAP = saved;
      probeOsSandbox(true);
    }
  });
});

describe.runIf(sandboxed)('through the CLI: attacks in one audit run change nothing for the others', () => {
  test('each attacker fails the sandbox check; the clean game audited after them gets a fresh audit', async () => {
    const { main } = await import('../../../core/cli/main');
    const dir = mkdtempSync(join(tmpdir(), 'spade-sec-cli-'));
    try {
      const names = Object.keys(ATTACKS).slice(0, 6);
      names.forEach((n, i) => writeFileSync(join(dir, `a${i}_attack.py`), gameWith(ATTACKS[n]!)));
      writeFileSync(join(dir, 'z_clean.py'), GUESS_GAME);
      const run = async (path: string): Promise<{ environments: { file: string; checks: { id: string; status: string; message: string }[] }[] }> => {
        let out = '';
        const code = await main(['audit', path, '--format', 'json', '--workers', '1'], { out: (t) => void (out += t), err: () => {} });
        expect([0, 1]).toContain(code);
        return JSON.parse(out) as { environments: { file: string; checks: { id: string; status: string; message: string }[] }[] };
      };
      const all = await run(dir);
      for (const e of all.environments.filter((x) => x.file.includes('attack'))) {
        expect(e.checks.find((c) => c.id === 'sandbox')?.status, e.file).toBe('fail');
      }
      hostUntouched();
      const alone = mkdtempSync(join(tmpdir(), 'spade-sec-clean-'));
      writeFileSync(join(alone, 'z_clean.py'), GUESS_GAME);
      const fresh = await run(alone);
      rmSync(alone, { recursive: true, force: true });
      const statuses = (r: typeof all) => r.environments.find((x) => x.file.endsWith('z_clean.py'))!.checks.map((c) => `${c.id}:${c.status}`);
      expect(statuses(all)).toEqual(statuses(fresh));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
