#!/usr/bin/env node
// Makes (or checks) a venv of its own with OpenEnv's Python package at the pinned version, for the
// tests that let OpenEnv's own tools judge `spade-workbench serve-env` (`openenv validate --url`,
// its GenericEnvClient). Kept apart from the runtime's venv (scripts/python-venv.mjs): games never
// see these packages.
//   node scripts/openenv-venv.mjs [VENV_DIR]   (default: $SPADE_OPENENV_VENV, else scratch/openenv-venv)
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const OPENENV_VERSION = '0.10.0';
const root = resolve(fileURLToPath(import.meta.url), '..', '..');
const venvDir = resolve(process.argv[2] || process.env.SPADE_OPENENV_VENV || join(root, 'scratch', 'openenv-venv'));
const py = join(venvDir, 'bin', 'python');
const installed = () => {
  try {
    return execFileSync(py, ['-c', 'import importlib.metadata as m; print(m.version("openenv"))'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
};
if (installed() === OPENENV_VERSION) {
  console.log(`${venvDir} (openenv ${OPENENV_VERSION})`);
  process.exit(0);
}
const t0 = Date.now();
if (!existsSync(py)) execFileSync('python3', ['-m', 'venv', venvDir], { stdio: 'inherit' });
execFileSync(py, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', `openenv==${OPENENV_VERSION}`], { stdio: 'inherit' });
const got = installed();
if (got !== OPENENV_VERSION) {
  console.error(`openenv ${got ?? 'missing'} in ${venvDir}, expected ${OPENENV_VERSION}`);
  process.exit(1);
}
console.log(`${venvDir} (openenv ${OPENENV_VERSION}, installed in ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
