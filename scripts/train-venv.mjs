#!/usr/bin/env node
// Makes (or checks) the training venv of the local GRPO recipe (torch, transformers, TRL, PEFT, gguf,
// pinned in core/train/venv.ts), the same code path as `spade-workbench train`, bundled with esbuild:
//   node scripts/train-venv.mjs [VENV_DIR]   (default: $SPADE_WORKBENCH_TRAIN_VENV, else ~/.cache/spade-workbench/train-venv)
import { build } from 'esbuild';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(import.meta.url), '..', '..');
const out = await build({ entryPoints: [join(root, 'core', 'train', 'venv.ts')], bundle: true, platform: 'node', format: 'esm', write: false, logLevel: 'error' });
const mod = await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`);
const venvDir = process.argv[2] ? resolve(process.argv[2]) : mod.trainVenvDir();
const t0 = Date.now();
try {
  const r = await mod.findOrCreateTrainVenv({ venvDir, log: (l) => console.log(l) });
  console.log(`${r.python} (${r.created ? `installed in ${((Date.now() - t0) / 1000).toFixed(1)} s` : 'already complete'})`);
} catch (e) {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
}
