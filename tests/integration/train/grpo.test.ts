/**
 * The local GRPO recipe really trains, as a job (the train-grpo recipe, local backend, followed by the
 * real JobManager): `spade-workbench train` runs two GRPO steps of SmolLM2-135M (the embedded GGUF)
 * with LoRA on the CPU, in the training venv, over two seed-pack games served by its own OpenEnv
 * server; the adapter's weights move away from their initial values, TRL's logged metrics reach the
 * job's metric series, and the checkpoint is evaluated as a model run record beside the base
 * model's. Cancel ends the job and its trainer. The model's numbers are not asserted. Needs the
 * training venv (scripts/train-venv.mjs) and the embedded model (npm run models).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readdirSync } from 'node:fs';
import { afterAll, expect, it } from 'vitest';
import { buildSpec } from '../../../core/jobs/launch';
import { openDataDir } from '../../../core/memory/cliDb';
import { RunService } from '../../../core/runs/service';
import { memoryCatalog } from '../../../core/episodes/catalog';
import { trainVenvDir } from '../../../core/train/venv';
import { tempDir } from '../../helpers/tmp';
import { ROOT, runCli } from '../openenv/serveEnvHelpers';
import { makeManager, waitFor, waitState } from '../jobs/helpers';

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
  let out = '';
  let r = { out: '' };
  const imp = await runCli(['import', pack, '--data-dir', data, '--quiet']);
  expect(imp.code, imp.err).toBe(0);
  const { db: jdb, manager } = makeManager(data);
  try {
    const spec = buildSpec({
      name: 'grpo', backend: 'local', recipe: 'train-grpo', workdir: join(tmp.dir, 'work'), dataDir: data,
      env: { TRAIN_SELECTION: 'tag:seed', TRAIN_STEPS: '2', TRAIN_GROUP_SIZE: '2', TRAIN_PROMPTS_PER_STEP: '2', TRAIN_MAX_TURNS: '2', TRAIN_MAX_NEW_TOKENS: '32', TRAIN_BOXED_REWARD: '0.5', TRAIN_SEEDS: '2', TRAIN_EVAL_SEEDS: '1', TRAIN_RUNTIME: 'cpython' },
    });
    expect(spec.env.SPADE_DATA_DIR).toBe(data);
    const job = await manager.submit(spec);
    const done = await waitState(manager, job.id, ['succeeded', 'failed', 'lost', 'cancelled'], 1_400_000);
    const log = manager.readLog(job.id, 0, 1 << 24).text;
    expect(done.state, log.slice(-3000)).toBe('succeeded');
    out = join(done.remoteLog!, '..', 'run');
    r = { out: log };
    // TRL's per-step dicts reached the job's metric series, one point per step.
    for (const key of ['reward', 'reward_std', 'frac_reward_zero_std', 'kl', 'loss', 'completions/mean_length']) {
      expect(manager.store.metrics(job.id, [key]).map((p) => p.step), key).toEqual([1, 2]);
    }
  } finally {
    await manager.close();
    jdb.close();
  }
  // The adapter moved: LoRA's B matrices start at zero, and training changed at least one of them.
  const init = tensors(join(out, 'adapter-init', 'adapter_model.safetensors'));
  const final = tensors(join(out, 'adapter-final', 'adapter_model.safetensors'));
  expect(final.size).toBe(init.size);
  const changed = [...final].filter(([k, v]) => !v.equals(init.get(k)!));
  expect(changed.length).toBeGreaterThan(0);

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
  adapter = join(out, 'adapter-final');
  evalData = data;
});

let adapter = '';
let evalData = '';

it('Cancel during the evaluation of a checkpoint ends the model plays (ModelService.play) and the server', { timeout: 600_000 }, async () => {
  expect(adapter, 'needs the adapter of the test above').not.toBe('');
  const { db: jdb, manager } = makeManager(evalData);
  let baseRun = '';
  try {
    // Many held-back seeds, so it is still playing when cancelled.
    const spec = buildSpec({ name: 'grpo-eval-cancel', backend: 'local', recipe: 'train-grpo', workdir: join(tmp.dir, 'work-eval'), dataDir: evalData, env: { TRAIN_SELECTION: 'tag:seed', TRAIN_EVALUATE: adapter, TRAIN_SEEDS: '2', TRAIN_EVAL_SEEDS: '200', TRAIN_MAX_TURNS: '2', TRAIN_MAX_NEW_TOKENS: '32', TRAIN_RUNTIME: 'cpython' } });
    const job = await manager.submit(spec);
    await waitFor('the base model to start playing', () => /evaluating base as run (\S+)/.test(manager.readLog(job.id, 0, 1 << 22).text), 400_000);
    baseRun = /evaluating base as run (\S+)/.exec(manager.readLog(job.id, 0, 1 << 22).text)![1]!;
    await waitFor('the base run record', () => {
      const d = openDataDir(evalData).db;
      try {
        return new RunService({ db: d, catalog: memoryCatalog(d), minShare: () => 0.5 }).store.get(baseRun)?.status === 'running';
      } finally {
        d.close();
      }
    }, 120_000);
    const stopped = await manager.stop(job.id);
    expect(stopped.state).toBe('cancelled');
    await waitFor('the checkpoint server to be gone', () => processesNaming(adapter).length === 0, 30_000);
  } finally {
    await manager.close();
    jdb.close();
  }
  // The run ended cancelled, as Cancel leaves any model run (resumable): not left 'running', not played out.
  const d = openDataDir(evalData).db;
  try {
    const run = new RunService({ db: d, catalog: memoryCatalog(d), minShare: () => 0.5 }).store.get(baseRun)!;
    expect(run.status).toBe('cancelled');
  } finally {
    d.close();
  }
});

/** Processes whose command line names `needle` (read from /proc). */
function processesNaming(needle: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(needle)) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

it('Cancel ends a training job and the trainer it started', { timeout: 600_000 }, async () => {
  const data = join(tmp.dir, 'data-cancel');
  const imp = await runCli(['import', join(ROOT, 'resources', 'seed-pack', 'games', 'game_00000_001_pattern_recognition.py'), '--data-dir', data, '--quiet']);
  expect(imp.code, imp.err).toBe(0);
  const { db, manager } = makeManager(data);
  try {
    const spec = buildSpec({ name: 'grpo-cancel', backend: 'local', recipe: 'train-grpo', workdir: join(tmp.dir, 'work-cancel'), dataDir: data, env: { TRAIN_SELECTION: 'Sequence', TRAIN_STEPS: '500', TRAIN_RUNTIME: 'cpython' } });
    const job = await manager.submit(spec);
    const running = await waitState(manager, job.id, ['running'], 60_000);
    const runDir = join(running.remoteLog!, '..', 'run');
    // The trainer is up when its first line (the model loaded, serve-env's tasks listed) is in the log.
    await waitFor('the trainer to load the model', () => manager.readLog(job.id, 0, 1 << 22).text.includes('"event": "loaded"'), 400_000);
    expect(processesNaming(runDir).length).toBeGreaterThan(0);
    const stopped = await manager.stop(job.id);
    expect(stopped.state).toBe('cancelled');
    await waitFor('the trainer to be gone', () => processesNaming(runDir).length === 0, 30_000);
  } finally {
    await manager.close();
    db.close();
  }
});
