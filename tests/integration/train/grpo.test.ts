/**
 * The local GRPO recipe really trains: `spade-workbench train` runs two GRPO steps of SmolLM2-135M
 * (the embedded GGUF) with LoRA on the CPU, in the training venv, over two seed-pack games served by
 * its own OpenEnv server; the adapter's weights move away from their initial values, TRL's logged
 * metrics parse into the job's metric series (the same parser the job follower uses), and the
 * checkpoint is evaluated as a model run record beside the base model's. The model's numbers are not
 * asserted. Needs the training venv (scripts/train-venv.mjs) and the embedded model (npm run models).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { parseLogText } from '../../../core/jobs/metrics';
import { openDataDir } from '../../../core/memory/cliDb';
import { setSeed } from '../../../core/memory/repository';
import { RunService } from '../../../core/runs/service';
import { memoryCatalog } from '../../../core/episodes/catalog';
import { trainVenvDir } from '../../../core/train/venv';
import { tempDir } from '../../helpers/tmp';
import { ROOT, runCli } from '../openenv/serveEnvHelpers';

const tmp = tempDir('spade-grpo-');
afterAll(() => tmp.cleanup());

/** The tensors of a .safetensors file by name, as raw bytes (8-byte header size, JSON header, data). */
function tensors(file: string): Map<string, Buffer> {
  const buf = readFileSync(file);
  const n = Number(buf.readBigUInt64LE(0));
  const head = JSON.parse(buf.subarray(8, 8 + n).toString('utf8')) as Record<string, { data_offsets?: [number, number] }>;
  const out = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(head)) if (v.data_offsets) out.set(k, buf.subarray(8 + n + v.data_offsets[0], 8 + n + v.data_offsets[1]));
  return out;
}

it('trains two GRPO steps with LoRA over serve-env, charts what TRL logs, and evaluates the checkpoint as a run', { timeout: 1_500_000 }, async () => {
  expect(existsSync(join(trainVenvDir(), 'bin', 'python')), 'make the training venv first: node scripts/train-venv.mjs').toBe(true);
  const pack = join(tmp.dir, 'pack');
  mkdirSync(pack);
  for (const stem of ['game_00000_001_pattern_recognition', 'game_00000_010_mathematical_reasoning']) {
    for (const ext of ['.py', '_hint.txt', '.json']) copyFileSync(join(ROOT, 'resources', 'seed-pack', 'games', stem + ext), join(pack, stem + ext));
  }
  const data = join(tmp.dir, 'data');
  const imp = await runCli(['import', pack, '--data-dir', data, '--quiet']);
  expect(imp.code, imp.err).toBe(0);
  // As the app marks the seed pack on first start: the selection is the seed pack's `is:seed`.
  const lib = openDataDir(data);
  expect(setSeed(lib.db, [1, 2], true)).toBe(2);
  lib.db.close();
  const out = join(tmp.dir, 'run');
  const r = await runCli(['train', '--selection', 'is:seed', '--steps', '2', '--group-size', '2', '--prompts-per-step', '2', '--max-turns', '2', '--max-new-tokens', '32', '--boxed-reward', '0.5', '--train-seeds', '2', '--eval-seeds', '1', '--runtime', 'cpython', '--out', out, '--data-dir', data]);
  expect(r.code, r.err.slice(-3000)).toBe(0);

  // The adapter moved: LoRA's B matrices start at zero, and training changed at least one of them.
  const init = tensors(join(out, 'adapter-init', 'adapter_model.safetensors'));
  const final = tensors(join(out, 'adapter-final', 'adapter_model.safetensors'));
  expect(final.size).toBe(init.size);
  const changed = [...final].filter(([k, v]) => !v.equals(init.get(k)!));
  expect(changed.length).toBeGreaterThan(0);

  // TRL's per-step dicts are job metrics: the parser the job follower uses reads them per step.
  const { points } = parseLogText(r.out);
  for (const key of ['reward', 'reward_std', 'frac_reward_zero_std', 'kl', 'loss', 'completions/mean_length']) {
    expect(points.filter((p) => p.key === key).map((p) => p.step).sort(), key).toEqual([1, 2]);
  }

  // Before and after as run records on the held-back seed (2), hinted and unhinted.
  const ids = r.out.split('\n').filter((l) => l.includes('"evaluated"')).map((l) => JSON.parse(l) as { model: string; run_id: string });
  expect(ids.map((x) => x.model)).toEqual(['base', 'checkpoint']);
  const db = openDataDir(data).db;
  try {
    const runs = new RunService({ db, catalog: memoryCatalog(db), minShare: () => 0.5 });
    for (const x of ids) {
      const v = runs.get(x.run_id);
      expect(v.run.model).toBe(x.model);
      expect(v.run.seedStart).toBe(2);
      expect(v.episodes.total).toBe(4);
    }
    expect(runs.compare(ids[0]!.run_id, ids[1]!.run_id).shared).toBe(2);
  } finally {
    db.close();
  }
  expect(r.out).toContain(`runs compare ${ids[0]!.run_id} ${ids[1]!.run_id}`);
});
