#!/usr/bin/env node
// Builds everything the app runs from: Node entries (CLI, web host, runtime workers, bench) and
// the Electron main/preload with esbuild, the renderer with Vite. `--node` skips the renderer.
import { build as esbuild } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const nodeOnly = process.argv.includes('--node');
const started = Date.now();

// The CLI and the bench: shared chunks, so a lazily imported module (a CLI command and the SQLite,
// Pyodide, SSH code behind it) is loaded only when used: `spade-workbench --help` loads almost nothing.
const splitEntries = {
  cli: 'core/cli/main.ts',
  bench: 'bench/main.ts',
};
// Processes and threads started from a file stay single files: the runtime child runs under Node's
// permission model, which lets it read its own script and nothing else.
const wholeEntries = {};
for (const [name, file] of Object.entries({
  'runtime-child': 'core/runtime/child.ts',
  'memory-worker': 'core/memory/worker.ts',
  'audit-worker': 'core/audit/worker.ts',
  'model-worker': 'core/models/localWorker.ts',
  'engine-worker': 'core/host/engineWorker.ts',
})) {
  if (existsSync(join(root, file))) wholeEntries[name] = file;
}

const nodeOptions = {
  absWorkingDir: root,
  outdir: 'dist/node',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
};
await esbuild({ ...nodeOptions, entryPoints: splitEntries, splitting: true, chunkNames: '[name]-[hash]' });
await esbuild({ ...nodeOptions, entryPoints: wholeEntries });

// Electron loads CommonJS for main and (sandboxed) preload; the preload must be one file.
await esbuild({
  absWorkingDir: root,
  entryPoints: { main: 'electron/main.ts' },
  outfile: 'dist/electron/main.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['electron', 'better-sqlite3', 'ws', 'pyodide', 'ssh2'],
  // core/ is ESM and reads import.meta.url; give the CommonJS bundle a real one.
  define: { 'import.meta.url': '__importMetaUrl' },
  banner: { js: "const __importMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
});
await esbuild({
  absWorkingDir: root,
  entryPoints: { preload: 'electron/preload.ts' },
  outfile: 'dist/electron/preload.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['electron'],
  logLevel: 'warning',
});

if (!nodeOnly) {
  const { build } = await import('vite');
  await build({ configFile: join(root, 'renderer.vite.config.ts'), logLevel: 'warn' });
  // Vendored at build time like Pyodide itself: math_verify's pure-Python wheels for the sandbox
  // (pinned, sha256-checked, gitignored; a no-op once they are there). Runs never touch the network.
  execFileSync(process.execPath, [join(root, 'scripts', 'fetch-pyodide-wheels.mjs')], { stdio: 'inherit' });
  // The embedded model (local endpoint) likewise: fetched and checked here, never at run time.
  execFileSync(process.execPath, [join(root, 'scripts', 'fetch-model.mjs')], { stdio: 'inherit' });
}
console.log(`build: done in ${((Date.now() - started) / 1000).toFixed(1)} s${nodeOnly ? ' (node only)' : ''}`);
