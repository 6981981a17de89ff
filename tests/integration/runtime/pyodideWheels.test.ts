/**
 * math_verify inside a real Pyodide (the package the app ships), installed from the local wheels
 * that scripts/fetch-pyodide-wheels.mjs fetches at build time: no network while installing or importing.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { fetchWheels, installWheels, PYODIDE_WHEELS, pyodideWheelsDir, verifyWheels, type PyodideFsLike } from '../../../core/runtime/pyodideWheels';
import { packageRoot } from '../../../core/base/appInfo';
import { tempDir } from '../../helpers/tmp';

const WHEELS = pyodideWheelsDir(packageRoot());

type Pyodide = PyodideFsLike & { runPython(code: string): unknown };
async function freshPyodide(): Promise<Pyodide> {
  const { loadPyodide } = (await import('pyodide')) as unknown as { loadPyodide(o: Record<string, unknown>): Promise<Pyodide> };
  return loadPyodide({ indexURL: `${join(packageRoot(), 'node_modules', 'pyodide')}/` });
}

beforeAll(async () => {
  // Build-time step (PyPI); a no-op when the wheels are already there and sound.
  await fetchWheels(WHEELS);
}, 300_000);

describe('math_verify in Pyodide from local wheels', () => {
  it('imports and verifies answers after installWheels, with fetch disabled; not before', async () => {
    const py = await freshPyodide();
    expect(() => py.runPython('import math_verify')).toThrow(/No module named 'math_verify'/);
    const realFetch = globalThis.fetch;
    globalThis.fetch = () => Promise.reject(new Error('network used at run time'));
    try {
      const installed = installWheels(py, WHEELS);
      expect(installed).toEqual(PYODIDE_WHEELS.map((w) => `${w.name}==${w.version}`));
      const r = py.runPython(
        'from math_verify import parse, verify\n' +
          'import sympy, mpmath\n' +
          'str((verify(parse("1/2"), parse("0.5")), verify(parse("1/3"), parse("0.5")), verify(parse("$\\\\frac{1}{2}$"), parse("0.5")), sympy.__version__, mpmath.__version__))',
      );
      expect(r).toBe("(True, False, True, '1.14.0', '1.3.0')");
    } finally {
      globalThis.fetch = realFetch;
    }
  }, 300_000);

  it('refuses missing or altered wheels, naming them, and installs nothing', async () => {
    const t = tempDir('spade-wheels-');
    try {
      const dir = join(t.dir, 'w');
      mkdirSync(dir);
      for (const w of PYODIDE_WHEELS) copyFileSync(join(WHEELS, w.file), join(dir, w.file));
      expect(verifyWheels(dir)).toEqual([]);
      writeFileSync(join(dir, 'sympy-1.14.0-py3-none-any.whl'), 'not a wheel');
      expect(verifyWheels(dir)).toEqual([expect.stringMatching(/^sympy-1\.14\.0-py3-none-any\.whl: sha256 [0-9a-f]{64}, expected e091cc3e/)]);
      const py = await freshPyodide();
      expect(() => installWheels(py, dir)).toThrow(/sympy-1\.14\.0-py3-none-any\.whl: sha256/);
      expect(() => py.runPython('import math_verify')).toThrow(/No module named 'math_verify'/);
      expect(verifyWheels(join(t.dir, 'nowhere'))).toHaveLength(PYODIDE_WHEELS.length);
    } finally {
      t.cleanup();
    }
  }, 300_000);
});
