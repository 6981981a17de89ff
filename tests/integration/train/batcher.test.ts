/**
 * The checkpoint server's dynamic batching (resources/train/spade_batcher.py), in the training venv:
 * requests that wait together and are sampled alike share one generate() call, another kind waits for
 * its own batch, each request gets its own tokens back, a failing batch fails only its requests, and a
 * batch of prompts of different lengths (left-padded) generates, greedily, what each does alone.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { trainVenvDir } from '../../../core/train/venv';
import { resolveLocalModel } from '../../../core/models/localModel';
import { modelArgs } from '../../../core/train/run';
import { ROOT } from '../openenv/serveEnvHelpers';

it('batches requests sampled alike, returns each its own tokens, and generates in a batch what it does alone', { timeout: 360_000 }, () => {
  // The script loads the model and generates greedily: 5-30 s alone, and past the integration's 120 s in a
  // full run under load (the third of 4 Dec); its own limit below is 300 s.
  const python = join(trainVenvDir(), 'bin', 'python');
  expect(existsSync(python), 'make the training venv first: node scripts/train-venv.mjs').toBe(true);
  const m = modelArgs(resolveLocalModel('SmolLM2-135M-Instruct'));
  const out = execFileSync(python, [join(import.meta.dirname, 'batcher_check.py'), join(ROOT, 'resources', 'train'), m.model, m.ggufFile!], { encoding: 'utf8', timeout: 300_000, env: { ...process.env, HF_HUB_OFFLINE: '1' } });
  const r = JSON.parse(out.trim().split('\n').at(-1)!) as { batches: [string, number[]][]; results: Record<string, unknown>; lengths: number[]; together: number[][]; alone: number[][] };
  // Queued 1a 2a 3b 4a 5a 6boom, at most 3 a batch: the first batch takes the a's up to 3, the b that
  // came between waits for the next, then each kind in the order it came.
  expect(r.batches).toEqual([
    ['a', [1, 2, 4]],
    ['b', [3]],
    ['a', [5]],
    ['boom', [6]],
    ['a', [7]],
  ]);
  expect(r.results).toEqual({ '1': [10], '2': [20], '3': [30], '4': [40], '5': [50], '6': 'the batch failed', '7': [70] });
  expect(r.lengths[0]).not.toBe(r.lengths[1]);
  expect(r.together).toEqual(r.alone);
  expect(r.together[0]!.length).toBeGreaterThan(0);
});
