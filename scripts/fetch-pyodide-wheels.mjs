#!/usr/bin/env node
// Fetches the pure-Python wheels the Pyodide sandbox needs for math_verify (pinned, sha256-checked)
// into resources/pyodide-wheels/, which electron-builder packages:
//   node scripts/fetch-pyodide-wheels.mjs [DIR]
// The pins and the code are core/runtime/pyodideWheels.ts, bundled on the fly with esbuild.
import { build } from 'esbuild';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(import.meta.url), '..', '..');
const out = await build({ entryPoints: [join(root, 'core', 'runtime', 'pyodideWheels.ts')], bundle: true, platform: 'node', format: 'esm', write: false, logLevel: 'error' });
const mod = await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`);
const dir = resolve(process.argv[2] || mod.pyodideWheelsDir(root));
try {
  const fetched = await mod.fetchWheels(dir, { log: (l) => console.log(l) });
  const problems = mod.verifyWheels(dir);
  if (problems.length) throw new Error(problems.join('\n'));
  console.log(`${mod.PYODIDE_WHEELS.length} wheels verified in ${dir} (${fetched.length} fetched)`);
} catch (e) {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
}
