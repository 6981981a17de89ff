/**
 * What a local GRPO job (recipe train-grpo, core/train) leaves to act on: its run folder
 * ($JOB_DIR/run, resources/jobs/train-grpo/train_grpo.sh) with adapter-final and TRL's checkpoint-N
 * adapters, and the `{"event":"compared",...}` lines `train` prints when an evaluation ends
 * (core/train/evaluate.ts). "Evaluate" launches the recipe again with TRAIN_EVALUATE set.
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { LaunchInput } from '../api/calls/jobs';
import type { TrainRun } from '../api/calls/train';
import { DomainError } from '../errors';
import { isTerminal, type JobRecord } from './types';

export const TRAIN_RECIPE = 'train-grpo';

function runDirOf(job: JobRecord): string | null {
  return job.backend === 'local' && job.remoteLog ? join(dirname(job.remoteLog), 'run') : null;
}

/** The adapters and evaluations of a train-grpo job; `log` is its log text. */
export function trainRun(job: JobRecord, log: string): TrainRun {
  if (job.recipe !== TRAIN_RECIPE) throw new DomainError('invalid_input', `${job.name} is not a local GRPO run (recipe ${job.recipe ?? 'none'})`);
  const evaluations: TrainRun['evaluations'] = [];
  for (const line of log.split('\n')) {
    if (!line.includes('"compared"')) continue;
    try {
      const j = JSON.parse(line) as { event?: unknown; base?: unknown; checkpoint?: unknown; adapter?: unknown };
      if (j.event === 'compared' && typeof j.base === 'string' && typeof j.checkpoint === 'string' && typeof j.adapter === 'string') evaluations.push({ base: j.base, checkpoint: j.checkpoint, adapter: j.adapter });
    } catch {
      // a log line that only mentions the word
    }
  }
  const runDir = runDirOf(job);
  if (!runDir || !existsSync(runDir)) return { runDir, note: runDir ? 'The run folder is not there yet (the trainer has not started).' : 'This job has no local run folder.', checkpoints: [], evaluations };
  const checkpoints: TrainRun['checkpoints'] = [];
  for (const name of readdirSync(runDir)) {
    const m = /^checkpoint-(\d+)$/.exec(name);
    if (!m && name !== 'adapter-final') continue;
    const path = join(runDir, name);
    if (!existsSync(join(path, 'adapter_config.json'))) continue;
    checkpoints.push({ name, path, step: m ? Number(m[1]) : null, final: !m });
  }
  checkpoints.sort((a, b) => (a.final ? 1 : 0) - (b.final ? 1 : 0) || (a.step ?? 0) - (b.step ?? 0));
  return { runDir, note: null, checkpoints, evaluations };
}

/** The launch that evaluates one of the job's adapters: the same recipe, folder and variables, TRAIN_EVALUATE = the adapter. */
export function evaluateInput(job: JobRecord, run: TrainRun, adapter: string): LaunchInput {
  if (!isTerminal(job.state)) throw new DomainError('conflict', `${job.name} is still ${job.state}: evaluate its adapters once it has ended`);
  const ck = run.checkpoints.find((c) => c.path === resolve(adapter));
  if (!ck) throw new DomainError('invalid_input', `${adapter} is not an adapter of ${job.name}; these are: ${run.checkpoints.map((c) => c.path).join(', ') || 'none'}`);
  const { TRAIN_EVALUATE: _old, ...env } = job.spec.env;
  return {
    name: `${job.name.replace(/ \(evaluate [^)]*\)$/, '')} (evaluate ${ck.name})`.slice(0, 200),
    backend: 'local',
    recipe: TRAIN_RECIPE,
    workdir: job.spec.workdir,
    env: { ...env, TRAIN_EVALUATE: ck.path },
    secretEnv: job.spec.secretEnv,
    importEnvironments: job.spec.importEnvironments,
    noPool: true,
  };
}
