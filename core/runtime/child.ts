/**
 * One Pyodide interpreter in its own Node process (built to dist/node/runtime-child.js).
 *
 * The pool starts this with Node's permission model (reads of the Pyodide files and this file only),
 * code generation from strings disallowed and an empty environment. Here we add the layers only the
 * child can add: Python sees an empty `js` module and no `pyodide_js`, the Node globals that lead
 * to the network or the host are removed before any environment code runs, and a watchdog thread
 * interrupts Python when a call runs past its deadline (the parent kills us if that fails).
 */
import { Worker } from 'node:worker_threads';
import { constants as fsConstants, fstatSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { pathToFileURL } from 'node:url';
import { boundedLineWriter, encodeFatal, encodeReady, lineSplitter, splitHead, type ChildInit } from './childProtocol';
import { installWheels, type PyodideFsLike } from './pyodideWheels';
import { errorMessage } from '../api/errorMessage';

interface PyBytes {
  getBuffer(type: 'u8'): { data: Uint8Array; release(): void };
  destroy(): void;
}
interface PyProxyFn {
  (arg: string): string | PyBytes;
  destroy?(): void;
}
interface PyodideLike {
  _module: { HEAPU8: Uint8Array; LDSO?: { loadedLibsByName: Record<string, unknown> } };
  FS: { mkdirTree(p: string): void; writeFile(p: string, data: string): void };
  runPython(code: string): unknown;
  setInterruptBuffer(buf: Int32Array): void;
  setStdout(opts: { write(buf: Uint8Array): number }): void;
  setStderr(opts: { write(buf: Uint8Array): number }): void;
  unregisterJsModule(name: string): void;
  registerJsModule(name: string, module: object): void;
  globals: { get(name: string): PyProxyFn };
}

// Replies go out on fd 3, a pipe the pool opened for us; stdout stays unused. They are written
// synchronously: the child has nothing else to do meanwhile, and a stream would copy a large
// reply into its queue and finish it on later loop turns.
const OUT_FD = 3;
try {
  fstatSync(OUT_FD);
} catch {
  console.error('runtime-child must be started by the runtime pool (it needs fd 3)');
  process.exit(2);
}

const pause = new Int32Array(new SharedArrayBuffer(4));
function writeAll(data: Uint8Array): void {
  let off = 0;
  while (off < data.length) {
    try {
      off += writeSync(OUT_FD, data, off, data.length - off);
    } catch (e) {
      // EAGAIN only if the pipe was made non-blocking; wait for the parent to drain it.
      if ((e as NodeJS.ErrnoException).code === 'EAGAIN') Atomics.wait(pause, 0, 0, 1);
      else process.exit(0); // the parent is gone
    }
  }
}
function post(line: string): void {
  writeAll(Buffer.from(line, 'utf8'));
}
const NEWLINE = Buffer.from('\n');

// Pyodide's Node file-system glue reads fs constants through process.binding, which the permission
// model refuses; give it just the constants and nothing else.
(process as unknown as { binding: (n: string) => unknown }).binding = (name: string) => {
  if (name === 'constants') return { fs: fsConstants };
  throw new Error(`process.binding(${name}) is not available in the runtime sandbox`);
};

/** Shared with the watchdog: [0] = call generation, [1] = deadline (ms from start), [2] = interrupts sent. */
const control = new Int32Array(new SharedArrayBuffer(16));
const interrupt = new Int32Array(new SharedArrayBuffer(4));
const t0 = Date.now();

// The watchdog polls instead of being woken per call: waking a thread twice per step() would cost
// more than the step. A runaway is interrupted within POLL ms of its deadline.
const WATCHDOG = `
const { workerData } = require('node:worker_threads');
const control = workerData.control, interrupt = workerData.interrupt, t0 = workerData.t0;
const POLL = 250;
for (;;) {
  const gen = Atomics.load(control, 0);
  const deadline = Atomics.load(control, 1);
  if (deadline === 0) { Atomics.wait(control, 0, gen, POLL); continue; }
  const left = deadline - (Date.now() - t0);
  if (left > 0) { Atomics.wait(control, 0, gen, Math.min(left, POLL)); continue; }
  if (Atomics.load(control, 0) === gen && Atomics.load(control, 1) !== 0) {
    Atomics.store(interrupt, 0, 2);
    Atomics.add(control, 2, 1);
    Atomics.wait(control, 0, gen, 200);
  }
}`;

let dispatch: PyProxyFn | undefined;
/**
 * The interpreter's whole WebAssembly memory as it was once the harness was ready and before any
 * environment ran. Copying it back gives the next environment interpreter state no other one
 * touched (issue 12): a game's patched modules, harness internals and globals are gone with it.
 */
let pristine: { py: PyodideLike; memory: Uint8Array; libs: number; reseed: PyProxyFn } | undefined;
/**
 * The same with math_verify (and sympy) imported, made the first time a game needs it, by trusted
 * code before any game ran: importing sympy costs seconds, restoring this copy milliseconds.
 */
let pristineMath: { memory: Uint8Array; libs: number } | undefined;
let dirty = false;
let current: { memory: Uint8Array; libs: number } | undefined;

/**
 * Keeps what trusted code made before any environment (the standard library, the harness, sympy)
 * out of Python's collector: a full collection over it cost 10-14 ms in Pyodide, and sessions that
 * come and go triggered one every few hundred calls, stalling whichever episode waited on it.
 * Frozen objects are never freed, which costs nothing here: they live as long as the interpreter.
 */
function freezeBaseline(py: PyodideLike): void {
  const freeze = freezers.get(py);
  if (freeze) freeze('');
}
/**
 * Each interpreter's native/harness_pyodide.py freeze_baseline, taken while its module could still be
 * imported: once the walls are up, importing a module of that folder is refused, trusted code included.
 */
const freezers = new Map<PyodideLike, PyProxyFn>();
function takeFreezer(py: PyodideLike): void {
  py.runPython('import harness_pyodide\n_spade_freeze = harness_pyodide.freeze_baseline');
  freezers.set(py, py.globals.get('_spade_freeze'));
  py.runPython('del _spade_freeze');
}

function libCount(py: PyodideLike): number {
  return Object.keys(py._module.LDSO?.loadedLibsByName ?? {}).length;
}

/** Puts the pristine interpreter back; false when that is not safe (a library was loaded since). */
function restorePristine(withMath: boolean): boolean {
  if (!pristine) return false;
  const { py } = pristine;
  const copy = withMath && pristineMath ? pristineMath : pristine;
  if (dirty || copy !== current) {
    // A dynamic library loaded since the snapshot lives partly outside the memory (the function
    // table, the loader's JS records): copying the memory back would leave them inconsistent.
    if (libCount(py) !== copy.libs) return false;
    const heap = py._module.HEAPU8;
    heap.set(copy.memory);
    if (heap.length > copy.memory.length) heap.fill(0, copy.memory.length);
    current = copy;
  }
  if (withMath && !pristineMath) {
    try {
      py.runPython('import math_verify');
      freezeBaseline(py);
    } catch {
      // Not installed: the game's own import fails and says so.
      return true;
    }
    pristineMath = { memory: py._module.HEAPU8.slice(), libs: libCount(py) };
    current = pristineMath;
  }
  dirty = false;
  // SPADE's global generators continue an unpredictable stream; the copy would replay one.
  pristine.reseed('');
  return true;
}
/** The deadline of the call running now (ms from t0), 0 between calls. */
let callDeadline = 0;

/**
 * What Python writes to fd 2 reaches us here, a line at a time, while a call runs. Two lines mean
 * something: `@call-deadline <ms>` from the audit (a tighter limit for one game call; 0 ends it)
 * and `@audit-phase <check>` (passed on, so an audit that dies is blamed on the right check).
 * Game code can write these too: it can only shorten its own limit, never pass the call's.
 */
function onStderrLine(line: string): void {
  if (callDeadline === 0) return;
  if (line.startsWith('@call-deadline ')) {
    const ms = Number(line.slice(15));
    if (!Number.isFinite(ms) || ms < 0) return;
    Atomics.store(control, 1, ms > 0 ? Math.min(callDeadline, Date.now() - t0 + ms) : callDeadline);
  } else if (line.startsWith('@sandbox-violation ')) {
    const json = line.slice(19);
    if (json.length < 2000) post(`V${json}\n`);
  }
}

/** The judge's stderr: which check runs (so a dead audit is blamed on it) and each result as decided (the judge dies with us). */
function onJudgeStderrLine(line: string): void {
  if (callDeadline === 0) return;
  if (line.startsWith('@audit-result ')) return void (line.length <= 65536 && post(`Q${line.slice(14)}\n`));
  if (!line.startsWith('@audit-phase ')) return;
  const phase = line.slice(13).trim();
  if (/^[\w.-]{1,64}$/.test(phase)) post(`P${phase}\n`);
}

/**
 * The audit's judge (native/audit_checks.py): a second interpreter in this process that never runs
 * environment code. It reaches the game's interpreter only through `spade_executor.call`, a line
 * in and a line out of the executor's dispatch; the game's interpreter has no handle on it (its
 * `js` module is empty), so nothing the game patches can change how its results are judged.
 * Made the first time this worker audits, with the harness files the worker started with.
 */
let judgeDispatch: PyProxyFn | undefined;
let judgeLoading: Promise<void> | undefined;
let initMsg: ChildInit | undefined;
let loadPy: ((o: Record<string, unknown>) => Promise<PyodideLike>) | undefined;
let currentId = -1;

/** How every interpreter of this process is made; `stderr` receives what Python writes to fd 2. */
function pyodideOptions(msg: ChildInit, stderr: (line: string) => void): Record<string, unknown> {
  return {
    indexURL: msg.pyodideDir.endsWith('/') ? msg.pyodideDir : `${msg.pyodideDir}/`,
    // Python's `js` module is this object: nothing in it, and no prototype to climb.
    jsglobals: Object.create(null) as object,
    // No PYTHONHASHSEED: SPADE fixes none, so set order (and a game built on it) varies per process.
    env: { HOME: '/home/pyodide', LANG: 'C.UTF-8' },
    stdout: () => {},
    stderr,
    stdin: () => null,
    checkAPIVersion: false,
  };
}

function executorCall(line: string): string {
  if (!dispatch) throw new Error('the environment interpreter is gone');
  let answer: string | PyBytes;
  try {
    answer = dispatch(line);
  } catch (e) {
    // The game's interpreter itself failed (WebAssembly stack overflow, os._exit): this worker
    // cannot be trusted again. The fatal line is written before exiting, synchronously.
    post(encodeFatal({ id: currentId, message: errorMessage(e).slice(0, 2000) }));
    process.exit(3);
  }
  if (typeof answer === 'string') return answer;
  const buf = answer.getBuffer('u8');
  try {
    return Buffer.from(buf.data).toString('utf8');
  } finally {
    buf.release();
    answer.destroy();
  }
}

async function loadJudge(): Promise<void> {
  const msg = initMsg!;
  const jpy = await loadPy!(pyodideOptions(msg, onJudgeStderrLine));
  jpy.FS.mkdirTree('/spade');
  if (msg.files['audit_checks.py'] === undefined) throw new Error("audit_checks.py is missing from the runtime's files");
  for (const [name, text] of Object.entries(msg.files)) jpy.FS.writeFile(`/spade/${name}`, text);
  jpy.registerJsModule('spade_executor', { call: executorCall });
  // native/harness_pyodide.py start_judge: the harness with the audit command, nothing of the game's.
  jpy.runPython("import sys\nsys.path.insert(0, '/spade')\nimport harness_pyodide, spade_executor\n_spade_judge = harness_pyodide.start_judge(spade_executor.call)\ndel harness_pyodide, spade_executor");
  takeFreezer(jpy);
  freezeBaseline(jpy);
  judgeDispatch = jpy.globals.get('_spade_judge');
}
/** Spin this long reading stdin after a reply before sleeping in the event loop (0: never). */
let spinMs = 0;

async function init(msg: ChildInit): Promise<void> {
  const started = performance.now();
  const watchdog = new Worker(WATCHDOG, { eval: true, workerData: { control, interrupt, t0 } });
  watchdog.unref();
  const { loadPyodide } = (await import(pathToFileURL(join(msg.pyodideDir, 'pyodide.mjs')).href)) as {
    loadPyodide(o: Record<string, unknown>): Promise<PyodideLike>;
  };
  initMsg = msg;
  loadPy = loadPyodide;
  const py = await loadPyodide(pyodideOptions(msg, onStderrLine));
  py.setInterruptBuffer(interrupt);
  // Game code can write to fds 1 and 2 directly, past the harness's capped sys.stdout: nothing
  // it writes there may grow without bound in this process (see boundedLineWriter).
  py.setStdout({ write: (buf) => buf.length });
  py.setStderr(boundedLineWriter(onStderrLine));
  if (msg.wheelsDir) {
    try {
      installWheels(py as unknown as PyodideFsLike, msg.wheelsDir);
    } catch (e) {
      // Without them math_verify games go to native CPython, as games that import numpy do.
      console.error(`math_verify wheels not installed: ${errorMessage(e)}`);
    }
  }
  py.FS.mkdirTree('/spade');
  for (const [name, text] of Object.entries(msg.files)) py.FS.writeFile(`/spade/${name}`, text);
  const extensions = Object.keys(msg.files)
    .filter((n) => !/^(harness|judge_|exec_)/.test(n) && n !== 'sandbox.py' && n !== 'audit_checks.py')
    .map((n) => n.slice(0, -3));
  // native/harness_pyodide.py: start() loads the harness and the extensions and hands back the
  // dispatch and the reseeder; seal() puts up the walls once `js` and `pyodide_js` are unregistered.
  py.runPython(`import sys\nsys.path.insert(0, '/spade')\nimport harness_pyodide\n_spade_dispatch, _spade_reseed = harness_pyodide.start(${JSON.stringify(extensions)})`);
  dispatch = py.globals.get('_spade_dispatch');
  const reseed = py.globals.get('_spade_reseed');
  py.runPython('del _spade_dispatch, _spade_reseed');
  takeFreezer(py);
  const python = String(py.runPython('harness_pyodide.python_version()'));
  for (const name of ['js', 'pyodide_js']) {
    try {
      py.unregisterJsModule(name);
    } catch {
      // not registered in this Pyodide version
    }
  }
  py.runPython('harness_pyodide.seal()\ndel harness_pyodide, sys');
  // From here on nothing in this process needs these; environment code must not find them.
  for (const name of ['fetch', 'WebSocket', 'EventSource', 'XMLHttpRequest', 'Request', 'Response', 'Headers', 'navigator']) {
    try {
      Reflect.deleteProperty(globalThis, name);
    } catch {
      // non-configurable in this Node version
    }
  }
  spinMs = process.platform === 'win32' ? 0 : Math.max(0, msg.spinUs ?? 0) / 1000;
  freezeBaseline(py);
  pristine = { py, memory: py._module.HEAPU8.slice(), libs: libCount(py), reseed };
  current = pristine;
  post(encodeReady({ coldMs: performance.now() - started, python }));
}

function call(id: number, line: string, timeoutMs: number, audit = false): void {
  const run = audit ? judgeDispatch : dispatch;
  if (!dispatch || !run) {
    post(`R${id} ${JSON.stringify({ id: null, ok: false, error: { kind: 'protocol', type: 'NotReady', message: 'interpreter not ready' } })}\n`);
    return;
  }
  Atomics.store(interrupt, 0, 0);
  dirty = true;
  callDeadline = Date.now() - t0 + timeoutMs;
  Atomics.store(control, 1, callDeadline);
  Atomics.add(control, 0, 1);
  let reply: string | PyBytes;
  currentId = id;
  try {
    reply = run(line);
  } catch (e) {
    // The harness catches everything Python raises; reaching here means the interpreter itself
    // failed (stack overflow in WebAssembly, os._exit, a fatal error). It cannot be trusted again.
    const message = errorMessage(e);
    post(encodeFatal({ id, message: message.slice(0, 2000) }));
    dispatch = undefined; // anything read before we exit is answered "not ready", never run
    spinMs = 0;
    setTimeout(() => process.exit(3), 10);
    return;
  } finally {
    callDeadline = 0;
    Atomics.store(control, 1, 0);
    Atomics.add(control, 0, 1);
  }
  if (typeof reply === 'string') {
    post(`R${id} ${reply}\n`);
    return;
  }
  const buf = reply.getBuffer('u8');
  try {
    writeAll(Buffer.from(`R${id} `));
    writeAll(buf.data);
    writeAll(NEWLINE);
  } finally {
    buf.release();
    reply.destroy();
  }
}

// Requests arrive on stdin, one per line. Between calls the child sleeps in the event loop; right
// after a reply it first polls the pipe for a short while, because the next request of a tight
// loop (an episode stepping, a script of steps) usually follows within tens of microseconds, and
// waking a sleeping process on another core costs about as much as a whole step() here.
const decoder = new StringDecoder('utf8');
const readBuf = Buffer.alloc(1 << 16);

/** Lines that arrived while the judge was being made: handled in order once it is there. */
let held: string[] | undefined;

function handle(line: string): void {
  if (held) {
    held.push(line);
    return;
  }
  const tag = line.charCodeAt(0);
  if (tag === 67 /* C */) {
    const [id, a] = splitHead(line, 1);
    const [timeoutMs, b] = splitHead(line, a);
    const body = line.slice(b);
    // Audits go to the judge; the pool writes requests with `cmd` first (JSON.stringify order).
    const audit = body.startsWith('{"cmd":"audit"');
    if (audit && !judgeDispatch) {
      held = [];
      judgeLoading ??= loadJudge();
      judgeLoading.then(
        () => {
          const later = held ?? [];
          held = undefined;
          call(id, body, timeoutMs, true);
          for (const l of later) handle(l);
        },
        (e: unknown) => {
          post(encodeFatal({ id, message: `failed to start the audit's judge: ${errorMessage(e)}`.slice(0, 2000) }));
          setTimeout(() => process.exit(4), 10);
        },
      );
      return;
    }
    call(id, body, timeoutMs, audit);
  } else if (tag === 73 /* I */) {
    init(JSON.parse(line.slice(1)) as ChildInit).catch((e: unknown) => {
      post(encodeFatal({ id: -1, message: `failed to start Pyodide: ${e instanceof Error ? (e.stack ?? e.message) : errorMessage(e)}`.slice(0, 4000) }));
      setTimeout(() => process.exit(4), 10);
    });
  } else if (tag === 70 /* F: fresh state for the next environment; Fm: with math_verify imported */) {
    if (!restorePristine(line.charCodeAt(1) === 109)) {
      // Not restorable here: this process must not serve another environment; the pool replaces it.
      post(encodeFatal({ id: -2, message: 'the interpreter cannot be reset to its pristine state; replaced' }));
      dispatch = undefined;
      setTimeout(() => process.exit(5), 10);
    }
  } else if (tag === 88 /* X */) process.exit(0);
}

const feed = lineSplitter(handle);

function spin(): void {
  let until = performance.now() + spinMs;
  while (spinMs > 0 && performance.now() < until) {
    let n: number;
    try {
      // stdin is non-blocking (Node opened it as a stream), so this returns at once when empty.
      n = readSync(0, readBuf, 0, readBuf.length, null);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EAGAIN') continue;
      spinMs = 0; // reading this way is not possible here: rely on the event loop alone
      return;
    }
    if (n === 0) process.exit(0);
    feed(decoder.write(readBuf.subarray(0, n)));
    until = performance.now() + spinMs;
  }
}

process.stdin.on('data', (chunk: Buffer) => {
  feed(decoder.write(chunk));
  spin();
});
process.stdin.on('end', () => process.exit(0));
