import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openDataDir } from '../../core/memory/cliDb';
import { setSeed } from '../../core/memory/repository';
import { packageRoot } from '../../core/base/appInfo';
import { trainVenvDir } from '../../core/train/venv';
import { tempDir } from '../../tests/helpers/tmp';
import { median, type BenchSuite } from '../types';

/** The CI settings of tests/integration/train/grpo.test.ts: 2 steps, 2 prompts x group 2, 2 turns of 32 tokens. */
const CI_ARGS = ['--steps', '2', '--group-size', '2', '--prompts-per-step', '2', '--max-turns', '2', '--max-new-tokens', '32', '--boxed-reward', '0.5', '--train-seeds', '2', '--no-eval', '--runtime', 'cpython'];

/**
 * train.step_s: seconds per GRPO step (TRL's own `step_time`: rollouts over serve-env plus the
 * update), SmolLM2-135M with LoRA on the CPU at the CI settings, median over the run's steps.
 */
export const trainSuite: BenchSuite = {
  prefix: 'train',
  async run(log) {
    const venv = trainVenvDir();
    if (!existsSync(join(venv, 'bin', 'python'))) {
      log(`train: no training venv at ${venv} (node scripts/train-venv.mjs makes it); train.step_s not measured`);
      return [];
    }
    const root = packageRoot();
    if (!existsSync(join(root, 'dist', 'node', 'cli.js'))) execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--node'], { stdio: 'inherit' });
    const tmp = tempDir('spade-bench-train-');
    try {
      const pack = join(tmp.dir, 'pack');
      mkdirSync(pack);
      for (const stem of ['game_00000_001_pattern_recognition', 'game_00000_010_mathematical_reasoning']) {
        for (const ext of ['.py', '_hint.txt', '.json']) copyFileSync(join(root, 'resources', 'seed-pack', 'games', stem + ext), join(pack, stem + ext));
      }
      const data = join(tmp.dir, 'data');
      const cli = join(root, 'bin', 'spade-workbench.mjs');
      execFileSync(process.execPath, [cli, 'import', pack, '--data-dir', data, '--quiet']);
      const lib = openDataDir(data);
      setSeed(lib.db, [1, 2], true);
      lib.db.close();
      const out: string = await new Promise((ok, fail) =>
        execFile(process.execPath, [cli, 'train', '--selection', 'is:seed', ...CI_ARGS, '--out', join(tmp.dir, 'run'), '--data-dir', data], { maxBuffer: 64 << 20 }, (e, so, se) => (e ? fail(new Error(`train failed: ${String(se).slice(-2000)}`)) : ok(so))),
      );
      const times = out
        .split('\n')
        .filter((l) => l.startsWith('{"step"'))
        .map((l) => (JSON.parse(l) as { step_time?: number }).step_time)
        .filter((x): x is number => typeof x === 'number');
      if (!times.length) throw new Error('train printed no step_time');
      log(`train: step_time per step ${times.map((t) => t.toFixed(1)).join(', ')} s`);
      return [{ id: 'train.step_s', value: Number(median(times).toFixed(1)), unit: 's', note: `GRPO step (rollouts over serve-env + LoRA update), SmolLM2-135M GGUF on the CPU, CI settings (${CI_ARGS.slice(0, 10).join(' ')}), median of ${times.length}` }];
    } finally {
      tmp.cleanup();
    }
  },
};
