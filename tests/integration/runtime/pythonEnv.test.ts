/**
 * The native runtime's Python: a real venv made with the real `venv` module and pip from PyPI (or
 * reused: .ci/run makes it once at SPADE_WORKBENCH_VENV), never the system interpreter.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findOrCreateRuntimeVenv, resolvePython, RUNTIME_REQUIREMENTS, venvPython } from '../../../core/runtime/pythonEnv';
import { packageRoot } from '../../../core/base/appInfo';
import { tempDir } from '../../helpers/tmp';

const VENV = process.env.SPADE_WORKBENCH_VENV || join(packageRoot(), 'scratch', 'python-venv');

describe('runtime venv with math_verify and numpy', () => {
  it('finds or creates the venv with the pinned packages, and SPADE-prompt games can verify answers', async () => {
    const lines: string[] = [];
    const info = await findOrCreateRuntimeVenv({ venvDir: VENV, log: (l) => lines.push(l) });
    expect(info).toMatchObject({ source: 'app-venv', isVenv: true, complete: true, numpy: '2.4.6', mathVerify: '0.9.0' });
    expect(info.path.startsWith(VENV) || info.path === venvPython(VENV)).toBe(true);
    const out = execFileSync(info.path, ['-s', '-c', 'from math_verify import parse, verify\nimport numpy\nprint(verify(parse("1/2"), parse("0.5")), verify(parse("1/3"), parse("0.5")))'], { encoding: 'utf8' });
    expect(out.trim()).toBe('True False');

    // Found again: no second install.
    const again: string[] = [];
    const info2 = await findOrCreateRuntimeVenv({ venvDir: VENV, log: (l) => again.push(l) });
    expect(info2.path).toBe(info.path);
    expect(again.some((l) => l.startsWith('Installing'))).toBe(false);
  }, 20 * 60_000);

  it('says which interpreter it uses: configured, else the complete app venv, else the system one', async () => {
    const venv = await findOrCreateRuntimeVenv({ venvDir: VENV });
    expect(resolvePython({ venvDir: VENV })).toMatchObject({ source: 'app-venv', path: venv.path, complete: true });
    expect(resolvePython({ configured: venv.path, venvDir: '/nonexistent' })).toMatchObject({ source: 'configured', path: venv.path });
    const sys = resolvePython({ venvDir: '/nonexistent/venv' });
    expect(sys?.source).toBe('system');
    expect(() => resolvePython({ configured: '/nonexistent/python3' })).toThrow(/configured Python \(\/nonexistent\/python3\) does not run/);
    expect(RUNTIME_REQUIREMENTS.map((r) => r.name)).toEqual(expect.arrayContaining(['math-verify', 'numpy', 'sympy']));
  }, 5 * 60_000);

  it('refuses to pip install into an interpreter that is not a venv', async () => {
    const t = tempDir('spade-venv-');
    try {
      // A "venv" whose python is really the system interpreter: installing there would touch the system.
      mkdirSync(join(t.dir, 'fake', 'bin'), { recursive: true });
      const system = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
      symlinkSync(system, join(t.dir, 'fake', 'bin', 'python'));
      await expect(findOrCreateRuntimeVenv({ venvDir: join(t.dir, 'fake') })).rejects.toThrow(/is not a virtual environment; refusing to install/);
    } finally {
      t.cleanup();
    }
  }, 60_000);
});
