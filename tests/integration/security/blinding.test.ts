import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AuditPool } from '../../../core/audit/pool';
import { PyodideAuditRunner } from '../../../core/audit/pyodideRunner';
import type { CheckResult } from '../../../core/audit/types';
import { PyodidePool } from '../../../core/runtime/pyodidePool';
import { probePython } from '../../../core/runtime/native';
import { probeOsSandbox } from '../../../core/runtime/osSandbox';
import { ensureChildBuilt } from '../runtime/helpers';

/**
 * Issue 46: the `sandbox` verdict is the audit hook's reports (native/sandbox.py), and a game must
 * not be able to blind it. Each game below first plays one trick on the detector (replacing what
 * its reporter used, lying through the objects it hands in, reaching the hook's closure through
 * what the sandbox left in its reach), then makes the same forbidden attempts: list `/` and
 * `/proc`, read `/proc/1/cmdline`, import `_socket`. In both runtimes every one of them must fail
 * `sandbox` with those attempts in its evidence, as the honest game without a trick does.
 */
const sandboxed = probeOsSandbox().available && !!probePython();

// `p` makes the path objects, `n` the module names: the tricks that lie through objects pass their own.
const ATTEMPTS = String.raw`
def _attempts(p=lambda s: s, n=lambda s: s):
    for f in (lambda: os.listdir(p("/")), lambda: os.listdir(p("/proc")), lambda: open(p("/proc/1/cmdline"), "rb").read(), lambda: __import__(n("_socket"))):
        try:
            f()
        except BaseException:
            pass
`;

const game = (trick: string, call = '_attempts()'): string => String.raw`import os, sys
${trick}
${ATTEMPTS}
class SneakyEnv:
    def __init__(self):
        self.max_turns = 4
    def reset(self, seed=None):
        self.t = 0
        ${call}
        return "Say \\boxed{7}.", {}
    def step(self, action):
        self.t += 1
        won = action.strip() == "\\boxed{7}"
        return ("right" if won else "wrong"), (1.0 if won else 0.0), won, self.t >= self.max_turns, {}
    def solution(self):
        return "\\boxed{7}"
`;

const LIAR = String.raw`class Liar(str):
    # every method the old hook called on a path or a module name lies
    def split(self, *a, **k): return ["math"]
    def startswith(self, *a, **k): return True
    def endswith(self, *a, **k): return True
    def __eq__(self, o): return True
    def __ne__(self, o): return False
    def __hash__(self): return hash("math")
    def __contains__(self, x): return False
    def __getitem__(self, i): raise RuntimeError("no slicing")
    def __repr__(self): raise RuntimeError("no repr")
    def __str__(self): return "/usr/lib"
    def __add__(self, o): return "/usr/lib"
    def __radd__(self, o): return "/usr/lib"`;

// A module name whose hash is honest (or the import would find another module in sys.modules and
// attempt nothing) but whose every comparison and method lies.
const NAME_LIAR = String.raw`class NameLiar(str):
    def split(self, *a, **k): return ["math"]
    def partition(self, *a, **k): return ("math", "", "")
    def startswith(self, *a, **k): return False
    def __eq__(self, o): return False
    def __ne__(self, o): return True
    __hash__ = str.__hash__
    def __repr__(self): raise RuntimeError("no repr")
    def __getitem__(self, i): return "math"`;

const GAMES: Record<string, string> = {
  honest: game(''),
  // What reaches fd 2 (the reports' way out) is dropped; the harness's own writes go through.
  'os.write replaced': game('import posix\n_w = os.write\nos.write = posix.write = lambda fd, data: len(data) if fd == 2 else _w(fd, data)'),
  'json replaced': game('import json, json.encoder\njson.dumps = lambda *a, **k: 1 / 0\njson._default_encoder = None\njson.encoder.encode_basestring_ascii = json.encoder.c_encode_basestring_ascii = None'),
  'str subclass with lying methods, os.fspath replaced': game(`${LIAR}\n${NAME_LIAR}\nos.fspath = lambda p: "/usr/lib"`, '_attempts(Liar, NameLiar)'),
  'bytes subclass paths': game(
    'class BLiar(bytes):\n    def decode(self, *a, **k): return "/usr/lib"\n    def __repr__(self): raise RuntimeError("no repr")\n    def __getitem__(self, i): return b"/usr/lib"\nimport warnings\nwarnings.simplefilter("ignore")',
    '_attempts(lambda s: BLiar(s.encode()))',
  ),
  'path objects whose __fspath__ lies the second time': game(
    'import io\nclass Two:\n    def __init__(self, s):\n        self.s, self.n = s, 0\n    def __fspath__(self):\n        self.n += 1\n        return self.s if self.n == 1 else "/usr/lib"\n    def __repr__(self): raise RuntimeError("no repr")\ndef _fileio(p):\n    try:\n        io.FileIO(Two(p)).read()\n    except BaseException:\n        pass',
    '_fileio("/proc/1/cmdline"); _attempts(Two)',
  ),
  'builtins replaced': game(
    'import builtins\n_saved = dict(vars(builtins))\ndef _patch():\n    for n in ("repr", "isinstance", "len", "str", "bytes", "type", "frozenset", "tuple", "slice"):\n        setattr(builtins, n, lambda *a, **k: 1 / 0)\n    builtins.TypeError = builtins.Exception = builtins.PermissionError = ZeroDivisionError',
    '_patch(); _attempts(); vars(builtins).update(_saved)',
  ),
  'sys.audit and os.fspath replaced': game(
    'sys.audit = lambda *a: None\nos.fspath = lambda p: "/usr/lib"\ndef _fifo():\n    try:\n        os.mkfifo("/tmp/spade-fifo")\n    except BaseException:\n        pass',
    '_fifo(); _attempts()',
  ),
  // The old hook raised a class of its own module: a game that caught one could give it a
  // __new__/__init__ that ran inside the hook, with the hook's frames in reach.
  "the refusal's class patched": game(String.raw`def _patch():
    try:
        open("/etc/hostname")
    except BaseException as e:
        def lie(cls, *a, **k):
            # runs inside the hook: its frame's cells can be rewritten (from Python 3.13 on)
            try:
                f = sys._getframe(1)
                for name in ("_report", "report", "send", "write", "fd", "callback", "deny"):
                    if name in f.f_locals:
                        f.f_locals[name] = None
            except BaseException:
                pass
            return PermissionError.__new__(PermissionError)
        try:
            type(e).__new__ = lie
        except BaseException:
            pass
_patch()`),
  // Whatever the sandbox leaves in a game's reach (os.mkfifo's stand-in, Pyodide's ctypes stand-in)
  // must not lead to the reporter: a function's closure cells and defaults can be rewritten.
  'closures of the sandbox\'s stand-ins rewritten': game(String.raw`def _cut(fn, seen=None):
    seen = set() if seen is None else seen
    if id(fn) in seen or not callable(fn):
        return
    seen.add(id(fn))
    for c in (getattr(fn, "__closure__", None) or ()):
        try:
            v = c.cell_contents
        except ValueError:
            continue
        if callable(v) and getattr(v, "__name__", "") in ("deny", "send", "report", "_spade_report", "_report"):
            _cut(v, seen)
            c.cell_contents = lambda *a, **k: None
        elif callable(v):
            _cut(v, seen)
    d = getattr(fn, "__defaults__", None)
    if d:
        fn.__defaults__ = tuple((lambda *a, **k: len(a[1]) if len(a) > 1 else 0) if callable(x) else x for x in d)
def _blind():
    import posix
    for f in (getattr(os, "mkfifo", None), getattr(os, "mknod", None), getattr(posix, "mkfifo", None)):
        _cut(f)
    try:
        import ctypes
        _cut(ctypes.__getattr__)
    except BaseException:
        pass
try:
    _blind()
except BaseException:
    pass`),
  // The reports' descriptor closed, or replaced by a pipe the game holds: the stand-ins refuse both.
  'the report descriptor closed': game('def _cut():\n    try:\n        os.close(2)\n    except BaseException:\n        pass\n    try:\n        os.closerange(0, 64)\n    except BaseException:\n        pass', '_cut(); _attempts()'),
  'the report descriptor replaced': game('def _swap():\n    r, w = os.pipe()\n    try:\n        os.dup2(w, 2)\n    except BaseException:\n        pass', '_swap(); _attempts()'),
};

// A way around the stand-ins: a fresh instance of the posix module has the real close. The hook
// finds its descriptor gone at the next report and ends the process: the audit fails (here at
// spade.reset, with the interpreter's death), it never passes with the attempts unseen.
const AROUND = game(
  'def _cut():\n    import _imp, importlib.machinery\n    _imp.create_builtin(importlib.machinery.BuiltinImporter.find_spec("posix")).close(2)',
  '_cut(); _attempts()',
);

// The report descriptor made non-blocking and its pipe filled just before the attempts (native: a
// pipe to the fork server): a report that met a full pipe was dropped.
const FLOODS = game(
  'def _flood():\n    try:\n        os.set_blocking(2, False)\n        for _ in range(64):\n            os.write(2, b"x" * 65536)\n    except BaseException:\n        pass',
  '_flood(); _attempts()',
);

type Audited = { checks: readonly CheckResult[] };
const sandboxOf = (a: Audited): CheckResult => a.checks.find((c) => c.id === 'sandbox')!;

/** Beyond the four attempts every game makes, what each trick's own attempt must show. */
const ALSO: Record<string, RegExp> = {
  'path objects whose __fspath__ lies the second time': /"event":"open","detail":"<Two object>"/,
  'the report descriptor closed': /"event":"os\.close","detail":"2".*"event":"os\.closerange"/,
  'the report descriptor replaced': /"event":"os\.dup2","detail":"\(\d+, 2\)"/,
};
/** ... in native CPython only (Pyodide's os has no mkfifo). */
const ALSO_NATIVE: Record<string, RegExp> = {
  'sys.audit and os.fspath replaced': /"event":"os\.mkfifo"/,
};

function expectNoPass(a: Audited): void {
  const reset = a.checks.find((c) => c.id === 'spade.reset');
  expect(reset?.status, JSON.stringify(a.checks)).toBe('fail');
  expect(reset?.message).toMatch(/interpreter (exited|failure)/i);
}

function expectCaught(name: string, a: Audited, native: boolean): void {
  const s = sandboxOf(a);
  expect(s?.status, `${name}: ${JSON.stringify(s)}`).toBe('fail');
  const attempts = JSON.stringify((s.evidence as { attempts?: unknown }).attempts ?? []);
  // every forbidden attempt is in the evidence, named for what it was
  expect(attempts, name).toContain('/proc/1/cmdline');
  expect(attempts, name).toContain('_socket');
  expect(attempts, name).toMatch(/os\.(listdir|scandir)/);
  if (ALSO[name]) expect(attempts, name).toMatch(ALSO[name]);
  if (native && ALSO_NATIVE[name]) expect(attempts, name).toMatch(ALSO_NATIVE[name]);
}

describe.runIf(sandboxed)('native CPython (bubblewrap): a game cannot blind the sandbox check', () => {
  let pool: AuditPool;
  beforeAll(() => {
    pool = new AuditPool({ workers: 2, envTimeoutSec: 60 });
  });
  afterAll(async () => {
    await pool.close();
  });
  for (const [name, source] of Object.entries(GAMES)) {
    test(name, async () => {
      expectCaught(name, await pool.audit(source, { checks: ['spade.*', 'sandbox'] }), true);
    }, 120_000);
  }
  test('the report descriptor closed around the stand-ins', async () => {
    expectNoPass(await pool.audit(AROUND, { checks: ['spade.*', 'sandbox'] }));
  }, 120_000);
  test('the report descriptor made non-blocking and its pipe filled', async () => {
    expectCaught('flood', await pool.audit(FLOODS, { checks: ['spade.*', 'sandbox'] }), true);
  }, 120_000);
});

describe('Pyodide: a game cannot blind the sandbox check', () => {
  let sandbox: PyodidePool;
  let runner: PyodideAuditRunner;
  beforeAll(() => {
    ensureChildBuilt();
    sandbox = new PyodidePool({ size: 1 });
    runner = new PyodideAuditRunner(() => sandbox, 120_000);
  });
  afterAll(async () => {
    await sandbox.shutdown();
  });
  for (const [name, source] of Object.entries(GAMES)) {
    test(name, async () => {
      expectCaught(name, await runner.audit(source, { checks: ['spade.*', 'sandbox'] }), false);
    }, 180_000);
  }
  test('the report descriptor closed around the stand-ins', async () => {
    expectNoPass(await runner.audit(AROUND, { checks: ['spade.*', 'sandbox'] }));
  }, 180_000);
});
