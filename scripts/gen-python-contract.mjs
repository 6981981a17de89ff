#!/usr/bin/env node
// Writes the Python side of the host/harness contract (native/harness_messages.py,
// native/spade_rules.py) from its TypeScript source (core/runtime/pythonContract.ts).
// `--check` writes nothing and exits 1 when a file is stale.
import { build } from 'esbuild';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = mkdtempSync(join(tmpdir(), 'spade-gen-'));
try {
  const outfile = join(dir, 'contract.mjs');
  await build({ entryPoints: [join(root, 'core/runtime/pythonContract.ts')], bundle: true, platform: 'node', format: 'esm', outfile, logLevel: 'error' });
  const { GENERATED_PYTHON } = await import(pathToFileURL(outfile).href);
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const [rel, render] of Object.entries(GENERATED_PYTHON)) {
    const path = join(root, rel);
    const text = render();
    let old = null;
    try {
      old = readFileSync(path, 'utf8');
    } catch {
      // a missing file is stale
    }
    if (old === text) continue;
    stale++;
    if (check) console.error(`${rel} is stale: run node scripts/gen-python-contract.mjs`);
    else {
      writeFileSync(path, text);
      console.log(`wrote ${rel}`);
    }
  }
  process.exitCode = check && stale ? 1 : 0;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
