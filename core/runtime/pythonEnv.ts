/**
 * The CPython the native runtime should use, with what SPADE's games import: `math_verify` (SPADE's
 * game prompt puts `from math_verify import parse, verify` in every cognitive game) and `numpy`.
 *
 *   resolvePython({ configured, venvDir })          -> which interpreter, and why (no side effects)
 *   findOrCreateRuntimeVenv({ venvDir, basePython }) -> a venv with RUNTIME_REQUIREMENTS, made if missing
 *
 * The venv lives in the app's data dir (`<dataDir>/python-venv`) or a configured path. Packages only
 * ever go into that venv: pip runs with the venv's own interpreter, after checking it is a venv.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';

/**
 * Pinned so every machine runs games against the same versions (numpy's and sympy's are Pyodide
 * 314's, so both runtimes agree; mpmath is the newest sympy 1.14 accepts). The dependency tree is
 * math-verify -> latex2sympy2_extended (==1.11.0) -> sympy, antlr4-python3-runtime (4.9.3..4.13.2);
 * sympy -> mpmath (<1.4).
 */
export const RUNTIME_REQUIREMENTS: readonly { name: string; version: string; module: string }[] = [
  { name: 'math-verify', version: '0.9.0', module: 'math_verify' },
  { name: 'latex2sympy2_extended', version: '1.11.0', module: 'latex2sympy2_extended' },
  { name: 'sympy', version: '1.14.0', module: 'sympy' },
  { name: 'mpmath', version: '1.3.0', module: 'mpmath' },
  { name: 'antlr4-python3-runtime', version: '4.13.2', module: 'antlr4' },
  { name: 'numpy', version: '2.4.6', module: 'numpy' },
];

export type PythonSource = 'configured' | 'app-venv' | 'system';

export interface RuntimePython {
  /** Absolute path of the interpreter (sys.executable). */
  path: string;
  version: string;
  source: PythonSource;
  /** Installed versions of the packages games need; null where missing. */
  numpy: string | null;
  mathVerify: string | null;
  /** True when every pinned requirement is installed at its pinned version. */
  complete: boolean;
  isVenv: boolean;
}

const READY_MARKER = 'spade-workbench-venv.json';

export function defaultVenvDir(dataDir: string): string {
  return join(dataDir, 'python-venv');
}

export function venvPython(venvDir: string): string {
  return process.platform === 'win32' ? join(venvDir, 'Scripts', 'python.exe') : join(venvDir, 'bin', 'python');
}

const INSPECT = `
import json, sys
from importlib import metadata
out = {"version": sys.version.split()[0], "executable": sys.executable, "venv": sys.prefix != sys.base_prefix, "packages": {}}
for name in sys.argv[1:]:
    try:
        out["packages"][name] = metadata.version(name)
    except Exception:
        out["packages"][name] = None
print(json.dumps(out))
`;

/** What an interpreter is and has, or null when it does not run as a Python 3.8+. */
export function inspectPython(path: string, source: PythonSource): RuntimePython | null {
  const r = spawnSync(path, ['-s', '-c', INSPECT, ...RUNTIME_REQUIREMENTS.map((q) => q.name)], {
    encoding: 'utf8',
    timeout: 30_000,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' },
  });
  if (r.status !== 0 || !r.stdout) return null;
  let j: { version: string; executable: string; venv: boolean; packages: Record<string, string | null> };
  try {
    j = JSON.parse(r.stdout.trim().split('\n').pop()!) as typeof j;
  } catch {
    return null;
  }
  const m = /^3\.(\d+)/.exec(j.version);
  if (!m || Number(m[1]) < 8) return null;
  return {
    path: j.executable && isAbsolute(j.executable) ? j.executable : path,
    version: j.version,
    source,
    numpy: j.packages.numpy ?? null,
    mathVerify: j.packages['math-verify'] ?? null,
    complete: RUNTIME_REQUIREMENTS.every((q) => j.packages[q.name] === q.version),
    isVenv: j.venv,
  };
}

export interface ResolveOptions {
  /** A user-configured interpreter (settings or SPADE_PYTHON): used as is, even without the packages. */
  configured?: string | null;
  /** The app's venv (default `<dataDir>/python-venv`). */
  venvDir?: string | null;
}

/**
 * The interpreter native runs should use: the configured one if it runs; else the app's venv if it is
 * complete; else the first system python3 with math_verify, then with numpy, then any. Null when none
 * runs. A configured path that does not run is an error, not a silent fallback.
 */
export function resolvePython(opts: ResolveOptions = {}): RuntimePython | null {
  if (opts.configured) {
    const info = inspectPython(opts.configured, 'configured');
    if (!info) throw new Error(`The configured Python (${opts.configured}) does not run as Python 3.8 or later`);
    return info;
  }
  if (opts.venvDir && existsSync(venvPython(opts.venvDir))) {
    const info = inspectPython(venvPython(opts.venvDir), 'app-venv');
    if (info?.complete) return info;
  }
  const found = [...new Set(['python3', '/usr/bin/python3', 'python'])].map((c) => inspectPython(c, 'system')).filter((x): x is RuntimePython => x !== null);
  return found.find((f) => f.mathVerify && f.numpy) ?? found.find((f) => f.numpy) ?? found[0] ?? null;
}

export interface VenvOptions {
  venvDir: string;
  /** Interpreter that creates the venv (needs the `venv` module); default: python3 on PATH, then /usr/bin/python3. */
  basePython?: string;
  /** Progress lines for the UI / CLI (pip's output included). */
  log?: (line: string) => void;
  /** Extra pip arguments (e.g. `--index-url`, `--find-links DIR --no-index` for offline installs). */
  pipArgs?: string[];
  /** Whole-operation limit; default 15 minutes (numpy and sympy are large downloads). */
  timeoutMs?: number;
}

/** Runs a venv or pip command, each output line to `log`; a failure keeps the output's tail in its message. */
export function runLogged(cmd: string, args: string[], log: (l: string) => void, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1' } });
    let tail = '';
    const onData = (b: Buffer) => {
      const s = b.toString('utf8');
      tail = (tail + s).slice(-4000);
      for (const line of s.split('\n')) if (line.trim()) log(line.trimEnd());
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} could not start: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${cmd} ${args.slice(0, 3).join(' ')} failed (${signal ? `killed: ${signal}` : `exit ${code}`}):\n${tail.trim()}`));
    });
  });
}

/**
 * The app's venv with RUNTIME_REQUIREMENTS: reused when its marker says the same pins and the packages
 * are really there; otherwise created (or repaired) in place. Resolves to the venv's interpreter.
 */
export async function findOrCreateRuntimeVenv(opts: VenvOptions): Promise<RuntimePython> {
  const log = opts.log ?? (() => {});
  const timeoutMs = opts.timeoutMs ?? 15 * 60_000;
  const py = venvPython(opts.venvDir);
  const pins = RUNTIME_REQUIREMENTS.map((q) => `${q.name}==${q.version}`);
  const markerPath = join(opts.venvDir, READY_MARKER);
  if (existsSync(py)) {
    const info = inspectPython(py, 'app-venv');
    let marked = false;
    try {
      marked = JSON.stringify((JSON.parse(readFileSync(markerPath, 'utf8')) as { requirements?: unknown }).requirements) === JSON.stringify(pins);
    } catch {
      marked = false;
    }
    if (info?.complete && marked) return info;
  } else {
    const base = opts.basePython ?? ['python3', '/usr/bin/python3'].find((c) => inspectPython(c, 'system') !== null);
    if (!base) throw new Error('No Python 3.8+ found to create the runtime venv (install python3 and python3-venv)');
    mkdirSync(opts.venvDir, { recursive: true });
    log(`Creating a Python venv in ${opts.venvDir} with ${base}`);
    await runLogged(base, ['-m', 'venv', opts.venvDir], log, timeoutMs);
  }
  const created = inspectPython(py, 'app-venv');
  // Refuse to pip install into anything that is not a venv: the system interpreter is never touched.
  if (!created?.isVenv) throw new Error(`${py} is not a virtual environment; refusing to install packages into it`);
  log(`Installing ${pins.join(' ')}`);
  await runLogged(py, ['-m', 'pip', 'install', '--no-input', ...(opts.pipArgs ?? []), ...pins], log, timeoutMs);
  const info = inspectPython(py, 'app-venv');
  if (!info?.complete) throw new Error(`The venv in ${opts.venvDir} still lacks pinned packages after pip install`);
  // Written last: a venv interrupted mid-install has no marker and is repaired on the next call.
  writeFileSync(markerPath, `${JSON.stringify({ requirements: pins, python: info.version, createdAt: new Date().toISOString() }, null, 2)}\n`);
  log(`Runtime Python: ${info.path} (Python ${info.version}, numpy ${info.numpy}, math-verify ${info.mathVerify})`);
  return info;
}
