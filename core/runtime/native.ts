import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { isAbsolute, join } from 'node:path';
import { createInterface } from 'node:readline';
import { runtimePaths, type RuntimePaths } from './paths';
import { failure, type HarnessReply } from './types';

export interface PythonInfo {
  path: string;
  version: string;
  numpy: boolean;
}

export interface NativeIsolation {
  /** 'namespace' when the interpreter runs in its own network namespace (no interfaces but lo). */
  network: 'namespace' | 'not applied';
  networkDetail: string;
  limits: string[];
}

let probedPython: PythonInfo | null | undefined;
let probedUnshare: boolean | undefined;

function tryPython(path: string): PythonInfo | null {
  const r = spawnSync(path, ['-s', '-c', 'import sys\nprint(sys.version.split()[0])\ntry:\n import numpy\n print("numpy")\nexcept Exception:\n print("-")\nprint(sys.executable)'], {
    encoding: 'utf8',
    timeout: 15_000,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' },
  });
  if (r.status !== 0 || !r.stdout) return null;
  const [version, np, executable] = r.stdout.trim().split('\n');
  if (!version || !/^3\.(\d+)/.test(version) || Number(/^3\.(\d+)/.exec(version)![1]) < 8) return null;
  // Sessions run with a scrubbed PATH, so a bare `python3` would find another interpreter than the
  // one probed here (e.g. /usr/bin/python3 instead of the user's pyenv one): keep its real path.
  return { path: executable && isAbsolute(executable) ? executable : path, version, numpy: np === 'numpy' };
}

/**
 * The interpreter for native runs: SPADE_PYTHON if set, else python3 on PATH, else /usr/bin/python3,
 * preferring the first that has numpy (generated games lean on it).
 */
export function probePython(force = false): PythonInfo | null {
  if (probedPython !== undefined && !force) return probedPython;
  const candidates = [process.env.SPADE_PYTHON, 'python3', '/usr/bin/python3', 'python'].filter((c): c is string => !!c);
  const found: PythonInfo[] = [];
  for (const c of [...new Set(candidates)]) {
    const info = tryPython(c);
    if (info) found.push(info);
    if (info?.numpy) break;
  }
  probedPython = found.find((f) => f.numpy) ?? found[0] ?? null;
  return probedPython;
}

/** Whether `unshare -rn` can give a child its own (empty) network namespace on this system. */
export function probeNetworkNamespace(force = false): boolean {
  if (probedUnshare !== undefined && !force) return probedUnshare;
  if (process.platform !== 'linux') return (probedUnshare = false);
  const r = spawnSync('unshare', ['-rn', 'true'], { timeout: 5000 });
  probedUnshare = r.status === 0;
  return probedUnshare;
}

export interface NativeOptions {
  timeoutMs?: () => number;
  memoryMb?: number;
  cpuSec?: number;
  graceMs?: number;
  paths?: RuntimePaths;
  /** Off only for tests that compare with and without the namespace. */
  networkNamespace?: boolean;
  /** An interpreter to use instead of the probed one (benchmarks comparing interpreters). */
  pythonPath?: string;
  log?: (level: 'info' | 'warn' | 'error', msg: string) => void;
}

interface Pending {
  line: string;
  timeoutMs: number;
  resolve: (r: HarnessReply) => void;
}

/** One native interpreter process per session: numpy's global state and crashes stay per game. */
class NativeProcess {
  readonly proc: ChildProcess;
  dead = false;
  private queue: Pending[] = [];
  private inflight?: Pending & { timer: NodeJS.Timeout };
  private nextId = 1;
  private stderrTail = '';

  constructor(cmd: string, args: string[], private readonly graceMs: number, private readonly onExit: (reason: string) => void) {
    this.proc = spawn(cmd, args, {
      cwd: '/',
      // A scrubbed environment: the host's tokens and keys never reach environment code.
      env: {
        PATH: '/usr/local/bin:/usr/bin:/bin',
        LANG: 'C.UTF-8',
        PYTHONDONTWRITEBYTECODE: '1',
        OPENBLAS_NUM_THREADS: '1',
        OMP_NUM_THREADS: '1',
        MKL_NUM_THREADS: '1',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const rl = createInterface({ input: this.proc.stdout! });
    rl.on('line', (line) => this.onLine(line));
    this.proc.stderr!.on('data', (d: Buffer) => {
      this.stderrTail = (this.stderrTail + d.toString('utf8')).slice(-4000);
    });
    this.proc.on('exit', (code, signal) => this.fail(`the Python process exited (${signal ?? code})${this.stderrTail ? `: ${this.stderrTail.trim().split('\n').slice(-3).join(' | ')}` : ''}`, 'crashed'));
    this.proc.on('error', (e) => this.fail(`could not start Python: ${e.message}`, 'crashed'));
    this.proc.stdin!.on('error', () => {});
  }

  request(req: Record<string, unknown>, timeoutMs: number): Promise<HarnessReply> {
    if (this.dead) return Promise.resolve(failure('crashed', 'the Python process is gone; this session is closed'));
    return new Promise((resolve) => {
      const id = this.nextId++;
      this.queue.push({ line: JSON.stringify({ ...req, id, timeoutSec: timeoutMs / 1000 }), timeoutMs, resolve });
      this.pump();
    });
  }

  private pump(): void {
    if (this.dead || this.inflight || !this.queue.length) return;
    const next = this.queue.shift()!;
    const timer = setTimeout(() => this.fail(`call ran past ${next.timeoutMs} ms and did not stop at the timer`, 'timeout'), next.timeoutMs + this.graceMs);
    this.inflight = { ...next, timer };
    this.proc.stdin!.write(next.line + '\n');
  }

  private onLine(line: string): void {
    const cur = this.inflight;
    if (!cur) return;
    let reply: HarnessReply;
    try {
      reply = JSON.parse(line) as HarnessReply;
    } catch {
      this.fail('the Python process wrote something that is not a protocol reply', 'crashed');
      return;
    }
    clearTimeout(cur.timer);
    this.inflight = undefined;
    cur.resolve(reply);
    this.pump();
  }

  fail(reason: string, kind: string): void {
    if (this.dead) return;
    this.dead = true;
    const cur = this.inflight;
    this.inflight = undefined;
    if (cur) {
      clearTimeout(cur.timer);
      cur.resolve(failure(kind, `${kind === 'timeout' ? 'Time limit' : 'Native interpreter failure'}: ${reason}`, { restarted: true }));
    }
    for (const q of this.queue.splice(0)) q.resolve(failure('crashed', `the Python process is gone (${reason})`));
    try {
      this.proc.kill('SIGKILL');
    } catch {
      // gone already
    }
    this.onExit(reason);
  }
}

/**
 * Native CPython runs, for games that need modules Pyodide lacks (numpy, math_verify). Less
 * isolated than Pyodide: the process has the host kernel's file system view, held back by resource
 * limits, a network namespace where the system allows one, a scrubbed environment and the audit
 * hook in native/sandbox.py. The UI says so.
 */
export class NativeRuntime {
  private readonly sessions = new Map<string, NativeProcess>();
  private readonly opts: Required<Omit<NativeOptions, 'paths' | 'log' | 'networkNamespace' | 'pythonPath'>>;
  private readonly paths: RuntimePaths;
  private readonly useNetns: boolean;
  private crashes = 0;

  constructor(private readonly options: NativeOptions = {}) {
    this.paths = options.paths ?? runtimePaths();
    this.opts = {
      timeoutMs: options.timeoutMs ?? (() => 30_000),
      memoryMb: options.memoryMb ?? 2048,
      cpuSec: options.cpuSec ?? 3600,
      graceMs: options.graceMs ?? 3000,
    };
    this.useNetns = options.networkNamespace ?? true;
  }

  python(): PythonInfo | null {
    return probePython();
  }

  isolation(): NativeIsolation {
    const ns = this.useNetns && probeNetworkNamespace();
    return {
      network: ns ? 'namespace' : 'not applied',
      networkDetail: ns ? 'own network namespace (unshare -rn): no interfaces but loopback' : process.platform === 'linux' ? 'unshare -rn is not permitted here; the audit hook is the only network guard' : 'network namespaces exist only on Linux',
      limits:
        process.platform === 'win32'
          ? []
          : [`address space ${this.opts.memoryMb} MiB`, `CPU ${this.opts.cpuSec} s per session`, 'no file writes (RLIMIT_FSIZE 0)', 'no new processes (RLIMIT_NPROC 0)', `per-call timer ${Math.round(this.opts.timeoutMs() / 1000)} s`],
    };
  }

  private command(): { cmd: string; args: string[] } {
    const py = this.options.pythonPath ? { path: this.options.pythonPath } : probePython();
    if (!py) throw new Error('No usable python3 found (set SPADE_PYTHON to an interpreter, 3.8 or newer)');
    const config = JSON.stringify({ memoryMb: this.opts.memoryMb, cpuSec: this.opts.cpuSec, timeoutSec: this.opts.timeoutMs() / 1000 });
    const pyArgs = ['-s', join(this.paths.nativeDir, 'cpython_main.py'), config];
    if (this.useNetns && probeNetworkNamespace()) return { cmd: 'unshare', args: ['-rn', py.path, ...pyArgs] };
    return { cmd: py.path, args: pyArgs };
  }

  async open(sessionId: string, req: Record<string, unknown>): Promise<HarnessReply> {
    const { cmd, args } = this.command();
    const p = new NativeProcess(cmd, args, this.opts.graceMs, (reason) => {
      if (this.sessions.get(sessionId) === p) {
        this.sessions.delete(sessionId);
        if (!/exited \((0|SIGKILL)\)/.test(reason)) this.crashes++;
        this.options.log?.('warn', `native session ${sessionId} ended: ${reason}`);
      }
    });
    this.sessions.set(sessionId, p);
    const reply = await p.request({ ...req, session: sessionId }, this.opts.timeoutMs());
    if (!reply.ok) this.drop(sessionId);
    return reply;
  }

  has(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  /** A sessionless request (ping, syntax check) in a short-lived process. */
  async oneShot(req: Record<string, unknown>, timeoutMs?: number): Promise<HarnessReply> {
    const { cmd, args } = this.command();
    const p = new NativeProcess(cmd, args, this.opts.graceMs, () => {});
    try {
      return await p.request(req, timeoutMs ?? this.opts.timeoutMs());
    } finally {
      p.proc.stdin?.end();
      setTimeout(() => p.fail('done', 'closed'), 2000).unref();
    }
  }

  call(sessionId: string, req: Record<string, unknown>, timeoutMs?: number): Promise<HarnessReply> {
    const p = this.sessions.get(sessionId);
    if (!p) return Promise.resolve(failure('unknown_session', 'this session is gone (closed, or its Python process ended)'));
    return p.request({ ...req, session: sessionId }, timeoutMs ?? this.opts.timeoutMs());
  }

  async close(sessionId: string): Promise<void> {
    this.drop(sessionId);
  }

  private drop(sessionId: string): void {
    const p = this.sessions.get(sessionId);
    this.sessions.delete(sessionId);
    if (!p) return;
    p.proc.stdin?.end();
    const t = setTimeout(() => p.fail('closed', 'closed'), 1000);
    t.unref();
    p.proc.once('exit', () => clearTimeout(t));
  }

  /** Kills a session's process (tests). */
  kill(sessionId: string): boolean {
    const p = this.sessions.get(sessionId);
    if (!p) return false;
    p.proc.kill('SIGKILL');
    return true;
  }

  pid(sessionId: string): number | undefined {
    return this.sessions.get(sessionId)?.proc.pid;
  }

  status(): { sessions: number; crashes: number } {
    return { sessions: this.sessions.size, crashes: this.crashes };
  }

  async shutdown(): Promise<void> {
    for (const id of [...this.sessions.keys()]) {
      const p = this.sessions.get(id)!;
      this.sessions.delete(id);
      p.fail('shutdown', 'closed');
    }
  }
}
