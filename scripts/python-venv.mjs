#!/usr/bin/env node
// Makes (or checks) the venv native runs use, with math-verify and numpy at the pinned versions:
//   node scripts/python-venv.mjs [VENV_DIR]      (default: $SPADE_WORKBENCH_VENV, else scratch/python-venv)
// The same code path as the app (core/runtime/pythonEnv.ts), bundled on the fly with esbuild.
import { build } from 'esbuild';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(import.meta.url), '..', '..');
const venvDir = resolve(process.argv[2] || process.env.SPADE_WORKBENCH_VENV || join(root, 'scratch', 'python-venv'));
const out = await build({ entryPoints: [join(root, 'core', 'runtime', 'pythonEnv.ts')], bundle: true, platform: 'node', format: 'esm', write: false, logLevel: 'error' });
const mod = await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`);
try {
  const info = await mod.findOrCreateRuntimeVenv({ venvDir, log: (l) => console.log(l) });
  console.log(`${info.path} (Python ${info.version}, numpy ${info.numpy}, math-verify ${info.mathVerify})`);
} catch (e) {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
}
