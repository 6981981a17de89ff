/**
 * math_verify (and its sympy) for the Pyodide sandbox, with no network at run time. SPADE's game
 * prompt puts `from math_verify import parse, verify` in every cognitive game; Pyodide ships neither.
 *
 *   fetchWheels(dir)        build time: download the pinned pure-Python wheels from PyPI, sha256-checked
 *   verifyWheels(dir)       which wheels are missing or altered
 *   installWheels(py, dir)  run time: unpack them into the interpreter's site-packages from local files
 *
 * The wheels live in resources/pyodide-wheels/ (gitignored, ~8 MB; `node scripts/fetch-pyodide-wheels.mjs`
 * fills it; electron-builder packages it). Pyodide 314's lock names sympy 1.14.0 and mpmath 1.4.1
 * but node_modules/pyodide carries no package files, and sympy 1.14 asks for mpmath < 1.4.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface WheelPin {
  name: string;
  version: string;
  file: string;
  url: string;
  sha256: string;
}

/** math-verify's dependency tree (pip, in a scratch venv): latex2sympy2_extended -> sympy, antlr4-python3-runtime; sympy -> mpmath. Hashes: PyPI's simple index. */
export const PYODIDE_WHEELS: readonly WheelPin[] = [
  {
    name: 'math-verify',
    version: '0.9.0',
    file: 'math_verify-0.9.0-py3-none-any.whl',
    url: 'https://files.pythonhosted.org/packages/62/76/6b4969bccc842b6567f7e6ee015684b9428a9b7fcbdf479e73716f43597f/math_verify-0.9.0-py3-none-any.whl',
    sha256: '3703e7c4885354027fa84409d762a596a2906d1fd4deb78361876bd905a76194',
  },
  {
    name: 'latex2sympy2_extended',
    version: '1.11.0',
    file: 'latex2sympy2_extended-1.11.0-py3-none-any.whl',
    url: 'https://files.pythonhosted.org/packages/e9/61/f75cd1fa54d8434276126034aed54dd120747de9a8fa013cdd79545ccbeb/latex2sympy2_extended-1.11.0-py3-none-any.whl',
    sha256: 'aebb77d52ce269e25028e4bea89ddb14d242ba36bcf7b636496fb5fd9728d234',
  },
  {
    name: 'sympy',
    version: '1.14.0',
    file: 'sympy-1.14.0-py3-none-any.whl',
    url: 'https://files.pythonhosted.org/packages/a2/09/77d55d46fd61b4a135c444fc97158ef34a095e5681d0a6c10b75bf356191/sympy-1.14.0-py3-none-any.whl',
    sha256: 'e091cc3e99d2141a0ba2847328f5479b05d94a6635cb96148ccb3f34671bd8f5',
  },
  {
    name: 'mpmath',
    version: '1.3.0',
    file: 'mpmath-1.3.0-py3-none-any.whl',
    url: 'https://files.pythonhosted.org/packages/43/e3/7d92a15f894aa0c9c4b49b8ee9ac9850d6e63b03c9c32c0367a13ae62209/mpmath-1.3.0-py3-none-any.whl',
    sha256: 'a0b2b9fe80bbcd81a6647ff13108738cfb482d481d826cc0e02f5b35e5c88d2c',
  },
  {
    name: 'antlr4-python3-runtime',
    version: '4.13.2',
    file: 'antlr4_python3_runtime-4.13.2-py3-none-any.whl',
    url: 'https://files.pythonhosted.org/packages/89/03/a851e84fcbb85214dc637b6378121ef9a0dd61b4c65264675d8a5c9b1ae7/antlr4_python3_runtime-4.13.2-py3-none-any.whl',
    sha256: 'fe3835eb8d33daece0e799090eda89719dbccee7aa39ef94eed3818cafa5a7e8',
  },
];

export function pyodideWheelsDir(root: string): string {
  return join(root, 'resources', 'pyodide-wheels');
}

function sha256(buf: Uint8Array): string {
  return createHash('sha256').update(buf).digest('hex');
}

/** Problems with the wheels in `dir`: one line per missing or altered file; empty when all are sound. */
export function verifyWheels(dir: string, pins: readonly WheelPin[] = PYODIDE_WHEELS): string[] {
  const problems: string[] = [];
  for (const w of pins) {
    const p = join(dir, w.file);
    if (!existsSync(p)) problems.push(`${w.file}: missing`);
    else {
      const got = sha256(readFileSync(p));
      if (got !== w.sha256) problems.push(`${w.file}: sha256 ${got}, expected ${w.sha256}`);
    }
  }
  return problems;
}

/** Downloads what is missing or altered; every file is checked against its pinned sha256 before it is kept. */
export async function fetchWheels(dir: string, opts: { log?: (line: string) => void; pins?: readonly WheelPin[] } = {}): Promise<string[]> {
  const log = opts.log ?? (() => {});
  mkdirSync(dir, { recursive: true });
  const fetched: string[] = [];
  for (const w of opts.pins ?? PYODIDE_WHEELS) {
    const p = join(dir, w.file);
    if (existsSync(p) && sha256(readFileSync(p)) === w.sha256) continue;
    log(`Fetching ${w.file}`);
    const res = await fetch(w.url);
    if (!res.ok) throw new Error(`${w.url}: HTTP ${res.status}`);
    const buf = new Uint8Array(await res.arrayBuffer());
    const got = sha256(buf);
    if (got !== w.sha256) throw new Error(`${w.file}: downloaded file has sha256 ${got}, expected ${w.sha256}; not kept`);
    const tmp = `${p}.partial-${process.pid}`;
    writeFileSync(tmp, buf);
    renameSync(tmp, p);
    fetched.push(w.file);
  }
  return fetched;
}

/** The part of a Pyodide instance this needs (the real object has far more). */
export interface PyodideFsLike {
  FS: { mkdirTree(p: string): void; writeFile(p: string, data: Uint8Array): void; unlink(p: string): void };
  runPython(code: string): unknown;
}

/**
 * Installs the wheels into a Pyodide instance from local files: each is checked, copied into the
 * in-memory FS and unpacked into site-packages (a pure-Python wheel is a zip laid out for exactly
 * that); `signal.alarm` gets a no-op stand-in where Pyodide has none (see below). Throws, naming the
 * files, when any is missing or altered.
 */
export function installWheels(py: PyodideFsLike, dir: string, pins: readonly WheelPin[] = PYODIDE_WHEELS): string[] {
  const problems = verifyWheels(dir, pins);
  if (problems.length) throw new Error(`Pyodide wheels in ${dir} are not usable (run scripts/fetch-pyodide-wheels.mjs): ${problems.join('; ')}`);
  const staging = '/tmp/spade-wheels';
  py.FS.mkdirTree(staging);
  for (const w of pins) py.FS.writeFile(`${staging}/${w.file}`, new Uint8Array(readFileSync(join(dir, w.file))));
  const files = JSON.stringify(pins.map((w) => `${staging}/${w.file}`));
  py.runPython(
    `import importlib, sysconfig, zipfile\n` +
      `_target = sysconfig.get_paths()["purelib"]\n` +
      `for _w in ${files}:\n` +
      `    with zipfile.ZipFile(_w) as _z:\n` +
      `        _z.extractall(_target)\n` +
      `importlib.invalidate_caches()\n` +
      `del _target, _w, _z\n` +
      // math_verify bounds parse()/verify() with signal.alarm, which Pyodide's signal module lacks: the
      // AttributeError is swallowed and every answer reads as wrong. A no-op alarm (no timer, returns 0
      // like an alarm with none pending) keeps SPADE's results; the sandbox's per-call limit still
      // interrupts a runaway parse.
      `import signal as _signal\n` +
      `if not hasattr(_signal, "alarm"):\n` +
      `    def _spade_no_alarm(seconds):\n` +
      `        return 0\n` +
      `    _signal.alarm = _spade_no_alarm\n` +
      `    del _spade_no_alarm\n` +
      `del _signal\n`,
  );
  for (const w of pins) py.FS.unlink(`${staging}/${w.file}`);
  return pins.map((w) => `${w.name}==${w.version}`);
}
