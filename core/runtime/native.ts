import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { ForkServer, type ForkedSession, type ForkServerCommand } from './forkServer';
import { bwrapCandidate, probeOsSandbox, probeOsSandboxAsync, refusal, sandboxedPython, type OsSandboxStatus } from './osSandbox';
import { cachedProbe, storeProbe } from './pythonProbeCache';
import { runtimePaths, type RuntimePaths } from './paths';
import { venvPython } from './pythonEnv';
import { failure, type HarnessReply } from './types';
import type { WireRequest } from './protocol';
import { errorMessage } from '../api/errorMessage';
import { usesMathVerify } from './choice';

export interface PythonInfo {
  path: string;
  version: string;
  numpy: boolean;
  /** Where the interpreter keeps its library and packages (bound read-only into the sandbox). */
  dirs: string[];
}

export interface NativeIsolation {
  /** 'bwrap' when native runs are inside bubblewrap; 'none' when allowed without (the status bar says so). */
  sandbox: 'bwrap' | 'none' | 'refused';
  sandboxDetail: string;
  /** 'namespace' when the interpreter runs in its own network namespace (no interfaces but lo). */
  network: 'namespace' | 'not applied';
  networkDetail: string;
  limits: string[];
}

let probedPython: PythonInfo | null | undefined;
let probedUnshare: boolean | undefined;

const PROBE = `import sys, os
print(sys.version.split()[0])
try:
    import numpy
    print("numpy")
except Exception:
    print("-")
print(sys.executable)
print(os.pathsep.join(sorted({sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix} | {p for p in sys.path if p and os.path.exists(p)})))`;

const probeOptions = () => ({ timeout: 15_000, cwd: '/', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' } });

function tryPython(path: string): PythonInfo | null {
  const r = spawnSync(path, ['-s', '-c', PROBE], { ...probeOptions(), encoding: 'utf8' });
  return r.status === 0 ? readProbe(path, r.stdout) : null;
}

/** The probe as a child the event loop does not wait on (a cold CLI loads its modules meanwhile). */
function tryPythonAsync(path: string): Promise<PythonInfo | null> {
  return new Promise((resolve) => {
    execFile(path, ['-s', '-c', PROBE], { ...probeOptions(), encoding: 'utf8' }, (err, stdout) => resolve(err ? null : readProbe(path, stdout)));
  });
}

function readProbe(path: string, stdout: string): PythonInfo | null {
  if (!stdout) return null;
  const [version, np, executable, dirs] = stdout.trim().split('\n');
  if (!version || !/^3\.(\d+)/.test(version) || Number(/^3\.(\d+)/.exec(version)![1]) < 8) return null;
  // Sessions run with a scrubbed PATH, so a bare `python3` would find another interpreter than the
  // one probed here (e.g. /usr/bin/python3 instead of the user's pyenv one): keep its real path.
  return {
    path: executable && isAbsolute(executable) ? executable : path,
    version,
    numpy: np === 'numpy',
    dirs: (dirs ?? '').split(':').filter((d) => isAbsolute(d)),
  };
}

function pythonCandidates(): string[] {
  const venv = process.env.SPADE_WORKBENCH_VENV ? venvPython(process.env.SPADE_WORKBENCH_VENV) : undefined;
  const candidates = [process.env.SPADE_PYTHON, venv && existsSync(venv) ? venv : undefined, 'python3', '/usr/bin/python3', 'python'].filter((c): c is string => !!c);
  return [...new Set(candidates)];
}

/**
 * The interpreter for native runs: SPADE_PYTHON if set, else the workbench's venv (with math-verify
 * and numpy; SPADE_WORKBENCH_VENV, made by scripts/python-venv.mjs), else python3 on PATH, else
 * /usr/bin/python3, preferring the first that has numpy (generated games lean on it).
 */
export function probePython(force = false): PythonInfo | null {
  if (probedPython !== undefined && !force) return probedPython;
  const found: PythonInfo[] = [];
  for (const c of pythonCandidates()) {
    const info = tryPython(c);
    if (info) found.push(info);
    if (info?.numpy) break;
  }
  probedPython = found.find((f) => f.numpy) ?? found[0] ?? null;
  return probedPython;
}

/**
 * probePython's answer without blocking, read from `cacheFile` where it still holds (see
 * pythonProbeCache): the same candidates in the same order, each probed only when its cached
 * answer is missing or stale. Fills the cache probePython() reads.
 */
export async function probePythonAsync(cacheFile?: string, force = false): Promise<PythonInfo | null> {
  if (probedPython !== undefined && !force) return probedPython;
  if (force) probedPython = undefined;
  const found: PythonInfo[] = [];
  for (const c of pythonCandidates()) {
    let info: PythonInfo | null;
    const cached = cacheFile ? cachedProbe<PythonInfo>(cacheFile, c) : null;
    if (cached?.hit) info = cached.info;
    else {
      info = await tryPythonAsync(c);
      if (cacheFile && cached?.stamp) storeProbe(cacheFile, c, cached.stamp, info?.dirs ?? [], info);
    }
    if (info) found.push(info);
    if (info?.numpy) break;
  }
  // A synchronous probe that ran meanwhile has already answered: keep its answer.
  probedPython ??= found.find((f) => f.numpy) ?? found[0] ?? null;
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

/** Whether native runs may go ahead without an OS sandbox (a setting, or the CLI's environment variable). */
export function unsandboxedAllowedByEnv(): boolean {
  return process.env.SPADE_ALLOW_UNSANDBOXED_NATIVE === '1';
}

export interface NativeOptions {
  timeoutMs?: () => number;
  memoryMb?: number;
  cpuSec?: number;
  graceMs?: number;
  paths?: RuntimePaths;
  /** Off only for tests that compare with and without the namespace (unsandboxed runs only). */
  networkNamespace?: boolean;
  /** An interpreter to use instead of the probed one (benchmarks comparing interpreters). */
  pythonPath?: string;
  /** Whether native runs may go ahead where no OS sandbox is available (the user's setting). */
  allowUnsandboxed?: () => boolean;
  /** Off only in the security tests that show the OS walls hold without the in-process guard. */
  auditHook?: boolean;
  /**
   * Audits' executors come from an audit zygote (native/host_zygote.py), a process beside the fork
   * server that puts up their common walls once and only forks. Off only to compare with executors
   * forked by the server itself (a differential test, the zygote's figure in bench/notes/isolation-figures.md).
   */
  auditZygote?: boolean;
  /** A file that keeps the interpreter probe's answer between processes (the CLI's data dir). */
  pythonProbeCache?: string;
  log?: (level: 'info' | 'warn' | 'error', msg: string) => void;
}

/**
 * Which fork server a session comes from. Each server imports the modules games lean on once, so
 * that sessions share them; a fork copies the server's page tables, so the lighter the server the
 * cheaper every session (about 1.5 ms from the lean one, 4-5 ms with sympy loaded).
 */
export type NativeTier = 'lean' | 'full';
const TIER_PRELOAD: Record<NativeTier, string[]> = { lean: ['numpy'], full: ['numpy', 'math_verify'] };

/** The server a game's session is forked from: the one with math_verify for games that use it. */
export function nativeTier(source: string): NativeTier {
  return usesMathVerify(source) ? 'full' : 'lean';
}

/** What every native session's process is started with: a scrubbed environment, no host tokens. */
function baseEnv(deterministic: boolean): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
    PYTHONDONTWRITEBYTECODE: '1',
    OPENBLAS_NUM_THREADS: '1',
    OMP_NUM_THREADS: '1',
    MKL_NUM_THREADS: '1',
    // SPADE sets no hash seed; the workbench's determinism option fixes it (labelled as such).
    ...(deterministic ? { PYTHONHASHSEED: '0' } : {}),
  };
}

/**
 * Native CPython runs, for games that need modules Pyodide lacks (numpy, math_verify). Every
 * session is its own process, forked from a server inside bubblewrap that never runs game code;
 * with no OS sandbox here, runs are refused unless the user allows them.
 */
export class NativeRuntime {
  private readonly servers = new Map<string, ForkServer>();
  private readonly sessions = new Map<string, ForkedSession>();
  private readonly opts: Required<Omit<NativeOptions, 'paths' | 'log' | 'networkNamespace' | 'pythonPath' | 'allowUnsandboxed' | 'auditHook' | 'auditZygote' | 'pythonProbeCache'>>;
  /** Set by shutdown(): a prestart() whose probes answer later starts no fork server nobody would stop. */
  private shut = false;
  /** prestart()'s probes, while they run: open() waits on them instead of probing again, blocking. */
  private probing?: Promise<void>;
  private readonly paths: RuntimePaths;
  private crashes = 0;

  constructor(private readonly options: NativeOptions = {}) {
    this.paths = options.paths ?? runtimePaths();
    this.opts = {
      timeoutMs: options.timeoutMs ?? (() => 30_000),
      memoryMb: options.memoryMb ?? 2048,
      cpuSec: options.cpuSec ?? 3600,
      graceMs: options.graceMs ?? 3000,
    };
  }

  python(): PythonInfo | null {
    if (this.options.pythonPath) return tryPython(this.options.pythonPath);
    return probePython();
  }

  private allowed(): boolean {
    return unsandboxedAllowedByEnv() || (this.options.allowUnsandboxed?.() ?? false);
  }

  sandbox(): OsSandboxStatus {
    return probeOsSandbox();
  }

  isolation(): NativeIsolation {
    const st = probeOsSandbox();
    const sandbox = st.available ? 'bwrap' : this.allowed() ? 'none' : 'refused';
    const ns = st.available || (this.useNetns() && probeNetworkNamespace());
    return {
      sandbox,
      sandboxDetail: st.available ? st.detail : sandbox === 'none' ? `native runs are NOT sandboxed: ${st.detail}` : refusal(st),
      network: ns ? 'namespace' : 'not applied',
      networkDetail: st.available ? 'own network namespace (bubblewrap): no interfaces but loopback' : ns ? 'own network namespace (unshare -rn): no interfaces but loopback' : 'no network namespace: the audit hook is the only network guard',
      limits:
        process.platform === 'win32'
          ? []
          : [`address space ${this.opts.memoryMb} MiB`, `CPU ${this.opts.cpuSec} s per session`, 'no file writes (RLIMIT_FSIZE 0)', 'no new processes or exec (seccomp)', 'one process per session, killed with it', `per-call timer ${Math.round(this.opts.timeoutMs() / 1000)} s`],
    };
  }

  private useNetns(): boolean {
    return this.options.networkNamespace ?? true;
  }

  /** Why native runs cannot start here, or null when they can. */
  unavailable(): string | null {
    if (!this.python()) return 'No usable python3 found (set SPADE_PYTHON to an interpreter, 3.8 or newer)';
    const st = probeOsSandbox();
    if (!st.available && !this.allowed()) return refusal(st);
    return null;
  }

  /** What the fork server is told of its limits and what to import once. */
  private serverConfig(tier: NativeTier): string {
    return JSON.stringify({ memoryMb: this.opts.memoryMb, cpuSec: this.opts.cpuSec, timeoutSec: this.opts.timeoutMs() / 1000, preload: TIER_PRELOAD[tier], ...(this.options.auditZygote === false ? { zygote: false } : {}) });
  }

  private command(deterministic: boolean, tier: NativeTier): ForkServerCommand {
    const py = this.python();
    if (!py) throw new Error('No usable python3 found (set SPADE_PYTHON to an interpreter, 3.8 or newer)');
    const config = this.serverConfig(tier);
    const env = baseEnv(deterministic);
    const st = probeOsSandbox();
    if (st.available) return sandboxedPython({ python: py.path, pythonDirs: py.dirs, nativeDir: this.paths.nativeDir, config, env });
    if (!this.allowed()) throw new Error(refusal(st));
    const pyArgs = ['-s', join(this.paths.nativeDir, 'cpython_main.py'), config];
    if (this.useNetns() && probeNetworkNamespace()) return { cmd: 'unshare', args: ['-rn', py.path, ...pyArgs], env };
    return { cmd: py.path, args: pyArgs, env };
  }

  private server(deterministic: boolean, tier: NativeTier = 'lean', command?: () => ForkServerCommand): ForkServer {
    const key = `${deterministic ? 'deterministic' : 'spade'}:${tier}`;
    let s = this.servers.get(key);
    if (!s || s.dead) {
      s = new ForkServer(command ?? (() => this.command(deterministic, tier)), {
        graceMs: this.opts.graceMs,
        ...(this.options.log ? { log: this.options.log } : {}),
      });
      this.servers.set(key, s);
    }
    return s;
  }

  /**
   * Starts the fork server a game's sessions will come from, without waiting: a process that runs
   * one batch (the CLI) overlaps the interpreter's start with its own. The interpreter and sandbox
   * probes run as children too, so nothing here blocks the event loop. Failures surface at open().
   */
  prestart(source?: string): void {
    if (this.probing || this.shut) return;
    const tier = source === undefined ? 'lean' : nativeTier(source);
    const python = this.options.pythonPath ? Promise.resolve(null) : probePythonAsync(this.options.pythonProbeCache);
    const sandbox = probeOsSandboxAsync();
    this.probing = Promise.all([python, sandbox]).then(
      () => undefined,
      () => undefined,
    );
    // Bubblewrap's probe asks what the server's own start asks again (can it make its namespaces?):
    // where bwrap is installed the server starts inside it at once, while the probe runs, instead of
    // after it. If bwrap cannot sandbox here, that start fails and the server is dropped below; a
    // server started this way never runs outside the sandbox.
    const bwrap = bwrapCandidate();
    if (bwrap) {
      void python
        .then(() => {
          // Shut down while the probe ran (a command stopped as it started): nothing may start after.
          if (this.shut) return;
          const py = this.python();
          if (!py) return;
          return this.server(false, tier, () => sandboxedPython({ python: py.path, pythonDirs: py.dirs, nativeDir: this.paths.nativeDir, config: this.serverConfig(tier), env: baseEnv(false) }, bwrap)).start();
        })
        .catch(() => {});
    }
    void this.probing
      .then(() => {
        if (!probeOsSandbox().available) {
          // The early start cannot have worked: forget it, so open() decides afresh (refuse, or run
          // unsandboxed where the user allowed it).
          const key = `spade:${tier}`;
          const early = this.servers.get(key);
          if (bwrap && early) {
            this.servers.delete(key);
            void early.shutdown();
          }
        }
        if (this.unavailable() || this.shut) return;
        return this.server(false, tier).start();
      })
      .catch(() => {});
  }

  /** Resolves once prestart()'s probes have answered (at once when none were started). */
  async probed(): Promise<void> {
    await this.probing;
  }

  /** Opens a session's process and sends its first request (a load); `signal` kills it (Cancel). */
  async open(sessionId: string, req: WireRequest, signal?: AbortSignal): Promise<HarnessReply> {
    await this.probing;
    const cancelled = () => failure('cancelled', 'opening the session was cancelled');
    if (signal?.aborted) return cancelled();
    const why = this.unavailable();
    if (why) return failure('unavailable', why);
    const deterministic = req.cmd === 'load' && !!req.options?.deterministic;
    let s: ForkedSession;
    try {
      s = await this.server(deterministic, req.cmd === 'load' ? nativeTier(req.source) : 'lean').open(sessionId, { timeoutSec: this.opts.timeoutMs() / 1000, deterministic, ...(this.options.auditHook === false ? { auditHook: false } : {}) });
    } catch (e) {
      return failure('unavailable', `could not start native CPython: ${errorMessage(e)}`);
    }
    this.sessions.set(sessionId, s);
    // The session's own process: killing it stops the load wherever it is.
    const stop = () => this.drop(sessionId);
    if (signal?.aborted) stop();
    signal?.addEventListener('abort', stop, { once: true });
    let reply: HarnessReply;
    try {
      reply = await s.request({ ...req, session: sessionId }, this.opts.timeoutMs());
    } finally {
      signal?.removeEventListener('abort', stop);
    }
    if (signal?.aborted) {
      this.drop(sessionId);
      return cancelled();
    }
    if (!reply.ok) this.drop(sessionId);
    return reply;
  }

  has(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  /** A sessionless request (ping, syntax check) in a process of its own, gone afterwards. */
  async oneShot(req: WireRequest, timeoutMs?: number): Promise<HarnessReply> {
    await this.probing;
    const why = this.unavailable();
    if (why) return failure('unavailable', why);
    const id = `one-${Math.random().toString(36).slice(2)}`;
    let s: ForkedSession;
    try {
      s = await this.server(false).open(id, { timeoutSec: (timeoutMs ?? this.opts.timeoutMs()) / 1000 });
    } catch (e) {
      return failure('unavailable', `could not start native CPython: ${errorMessage(e)}`);
    }
    try {
      return await s.request(req, timeoutMs ?? this.opts.timeoutMs());
    } finally {
      s.close();
    }
  }

  /**
   * A forked session for whole-environment work: the caller closes it. `judge`: an audit, whose
   * checks run in a process of their own that drives the game's process (native/audit_checks.py).
   */
  async fork(id: string, timeoutSec: number, judge = false, source?: string): Promise<ForkedSession> {
    await this.probing;
    const why = this.unavailable();
    if (why) throw new Error(why);
    return this.server(false, source === undefined ? 'full' : nativeTier(source)).open(id, { timeoutSec, ...(judge ? { judge: true } : {}), ...(this.options.auditHook === false ? { auditHook: false } : {}) });
  }

  call(sessionId: string, req: WireRequest, timeoutMs?: number): Promise<HarnessReply> {
    const p = this.sessions.get(sessionId);
    if (!p || p.dead) {
      this.sessions.delete(sessionId);
      return Promise.resolve(failure('unknown_session', 'this session is gone (closed, or its Python process ended)'));
    }
    return p.request({ ...req, session: sessionId }, timeoutMs ?? this.opts.timeoutMs());
  }

  /** What the sandbox refused this session so far (the `sandbox` audit check's evidence). */
  violations(sessionId: string): { event: string; detail: string }[] {
    return [...(this.sessions.get(sessionId)?.violations ?? [])];
  }

  async close(sessionId: string): Promise<void> {
    this.drop(sessionId);
  }

  private drop(sessionId: string): void {
    const p = this.sessions.get(sessionId);
    this.sessions.delete(sessionId);
    p?.close();
  }

  /** Cancel of a session's work in flight: its own process is killed, so the call answers at once. */
  interrupt(sessionId: string): boolean {
    if (!this.sessions.has(sessionId)) return false;
    this.drop(sessionId);
    return true;
  }

  /** Kills a session's process (tests). */
  kill(sessionId: string): boolean {
    const p = this.sessions.get(sessionId);
    if (!p) return false;
    p.fail('killed', 'crashed');
    this.crashes++;
    return true;
  }

  status(): { sessions: number; crashes: number } {
    let crashes = this.crashes;
    for (const s of this.servers.values()) crashes += s.crashes;
    return { sessions: this.sessions.size, crashes };
  }

  async shutdown(): Promise<void> {
    this.shut = true;
    this.sessions.clear();
    await Promise.all([...this.servers.values()].map((s) => s.shutdown()));
    this.servers.clear();
  }
}
