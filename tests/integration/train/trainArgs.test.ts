/**
 * `train` refuses what it cannot do before it starts anything (no venv, no server, no trainer), with
 * a usage error that says why; the train-grpo recipe gets the launching workbench's library only on
 * a local job; the training venv's place follows SPADE_WORKBENCH_TRAIN_VENV.
 */
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { buildSpec } from '../../../core/jobs/launch';
import { trainVenvDir } from '../../../core/train/venv';
import { modelArgs } from '../../../core/train/run';
import { tempDir } from '../../helpers/tmp';
import { ROOT, runCli } from '../openenv/serveEnvHelpers';

const tmp = tempDir('spade-train-args-');
afterAll(() => tmp.cleanup());

it('refuses bad training options with a usage error, before making anything', async () => {
  const data = join(tmp.dir, 'data');
  const imp = await runCli(['import', join(ROOT, 'resources', 'seed-pack', 'games', 'game_00000_001_pattern_recognition.py'), '--data-dir', data, '--quiet']);
  expect(imp.code, imp.err).toBe(0);
  const venv = join(tmp.dir, 'never-made');
  const cases: [string[], RegExp][] = [
    [[], /--selection/],
    [['--selection', 'Sequence', '--group-size', '1'], /--group-size/],
    [['--selection', 'Sequence', '--hint-share', '1.5'], /--hint-share/],
    [['--selection', 'Sequence', '--lr', 'fast'], /--lr/],
    [['--selection', 'Sequence', '--runtime', 'gpu'], /--runtime/],
    [['--selection', 'no-such-environment-anywhere'], /No environment to train on/],
  ];
  for (const [args, why] of cases) {
    const r = await runCli(['train', ...args, '--data-dir', data, '--train-venv', venv]);
    expect(r.code, args.join(' ')).toBe(2);
    expect(r.err, args.join(' ')).toMatch(why);
  }
  // Nothing was installed for a refused command.
  const { existsSync } = await import('node:fs');
  expect(existsSync(venv)).toBe(false);
});

it('fills {{DATA_DIR}} with the launching library on a local job only', () => {
  const local = buildSpec({ name: 't', backend: 'local', recipe: 'train-grpo', dataDir: '/lib/here', env: { TRAIN_SELECTION: 'is:seed' } });
  expect(local.env.SPADE_DATA_DIR).toBe('/lib/here');
  expect(local.command.slice(0, 2)).toEqual(['sh', '{{JOB_DIR}}/train_grpo.sh']);
  // Without a known library the variable is left out (the CLI's default), never the placeholder.
  expect(buildSpec({ name: 't', backend: 'local', recipe: 'train-grpo', env: { TRAIN_SELECTION: 'x' } }).env).not.toHaveProperty('SPADE_DATA_DIR');
  // What to train on is the user's to say: the recipe does not guess.
  expect(() => buildSpec({ name: 't', backend: 'local', recipe: 'train-grpo' })).toThrow(/needs TRAIN_SELECTION/);
  expect(() => buildSpec({ name: 't', backend: 'ssh', recipe: 'train-grpo', ssh: { host: 'x' }, env: { TRAIN_SELECTION: 'x' } })).toThrow(/does not run on the ssh backend/);
});

it('places the training venv by SPADE_WORKBENCH_TRAIN_VENV, else the user cache, and reads a .gguf model as folder + file', () => {
  expect(trainVenvDir({ SPADE_WORKBENCH_TRAIN_VENV: '/x/venv' })).toBe('/x/venv');
  expect(trainVenvDir({ XDG_CACHE_HOME: '/c' })).toBe('/c/spade-workbench/train-venv');
  expect(modelArgs('/m/SmolLM2.Q4_1.gguf')).toEqual({ model: '/m', ggufFile: 'SmolLM2.Q4_1.gguf' });
  expect(modelArgs('HuggingFaceTB/SmolLM2-135M-Instruct')).toEqual({ model: 'HuggingFaceTB/SmolLM2-135M-Instruct', ggufFile: null });
});
