/**
 * Before and after as records: the base model and a LoRA checkpoint (the run's final adapter or any
 * `checkpoint-N` TRL saved) are served by one OpenAI-compatible server in the training venv
 * (resources/train/spade_serve_model.py: model `base` with the adapter off, `checkpoint` with it on)
 * and each plays the run's environments on the held-back seeds, hinted and unhinted, as a model run
 * through ModelService.play, the same path as any endpoint in the app. The two runs are compared with
 * RunService.compare (Runs → compare): regret and win rate per environment and their deltas.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from '../memory/db';
import { getEnvironmentByHash } from '../memory/repository';
import { memoryCatalog } from '../episodes/catalog';
import type { EpisodeService } from '../episodes/service';
import { ModelService } from '../runs/modelService';
import type { RuntimeChoice } from '../api/schemas';
import { endpointSchema } from '../api/calls/models';
import { errorMessage } from '../api/errors';
import { SPADE_SAMPLING } from '../api/spadeSampling';
import { RunService, type CompareRow } from '../runs/service';
import { SettingsStore } from '../memory/settingsStore';
import { runPython, trainScript, type TrainSettings } from './run';

export interface EvalContext {
  s: Pick<TrainSettings, 'model' | 'ggufFile' | 'maxNewTokens' | 'maxTurns' | 'trainSeeds' | 'evalSeeds' | 'selection'>;
  /** The adapter folder (adapter_config.json and its weights). */
  adapter: string;
  python: string;
  db: Db;
  episodes: EpisodeService;
  hashes: string[];
  runtime: RuntimeChoice;
  out(line: string): void;
  err(line: string): void;
  signal: AbortSignal;
  onChild(c: ChildProcess): void;
}

export type EvalResult = { code: 0; base: string; checkpoint: string; rows: CompareRow[] } | { code: number };

/** Why a folder is not a LoRA adapter to evaluate, or null when it is one. */
export function notAnAdapter(dir: string): string | null {
  if (!existsSync(dir)) return `No such folder: ${dir}`;
  if (!existsSync(join(dir, 'adapter_config.json'))) return `${dir} is not a LoRA adapter (no adapter_config.json): give the run's adapter-final or one of its checkpoint-N folders`;
  return null;
}

export async function evaluateCheckpoint(c: EvalContext): Promise<EvalResult> {
  let url: string | null = null;
  let ready!: () => void;
  const listening = new Promise<void>((r) => (ready = r));
  const exited = runPython(c.python, [trainScript('spade_serve_model.py'), '--model', c.s.model, ...(c.s.ggufFile ? ['--gguf-file', c.s.ggufFile] : []), '--adapter', c.adapter, '--max-new-tokens', String(c.s.maxNewTokens)], {
    line: (l) => {
      try {
        const j = JSON.parse(l) as { event?: string; url?: string };
        if (j.event === 'listening' && j.url) (url = j.url), ready();
      } catch {
        c.err(l);
      }
    },
    err: c.err,
    signal: c.signal,
    onStart: c.onChild,
  });
  await Promise.race([listening, exited]);
  if (c.signal.aborted) return { code: 130 };
  if (!url) return c.err('train: the checkpoint server did not start'), { code: 1 };
  const runs = new RunService({ db: c.db, catalog: memoryCatalog(c.db), minShare: () => new SettingsStore(c.db).get().runMinSuccess });
  const models = new ModelService({
    episodes: c.episodes,
    // The checkpoint server is local and keyless.
    secret: () => undefined,
    envInfo: (hash) => {
      const e = getEnvironmentByHash(c.db, hash);
      return { skill: e?.skill ?? null, recordedRegret: e?.regret ?? null, recordedWinRate: e?.winRate ?? null };
    },
    runs,
  });
  const ids: Record<string, string> = {};
  for (const model of ['base', 'checkpoint'] as const) {
    // Eight episodes at once: the server generates the requests that wait together in one batch (spade_batcher.py).
    const endpoint = endpointSchema.parse({ baseUrl: url, model, temperature: SPADE_SAMPLING.temperature, topP: SPADE_SAMPLING.topP, topK: SPADE_SAMPLING.topK, maxTokens: c.s.maxNewTokens, concurrency: 8 });
    const runId = `run-${Date.now().toString(36)}-${model}`;
    c.err(`train: evaluating ${model} as run ${runId} (${c.hashes.length} environment(s), seeds ${c.s.trainSeeds}..${c.s.trainSeeds + c.s.evalSeeds - 1}, hinted and unhinted)`);
    try {
      // The held-back seeds on both arms: the paired estimator, labelled as such in the run.
      const r = await models.play({ hashes: c.hashes, endpoint, seeds: c.s.evalSeeds, seedStart: c.s.trainSeeds, arms: ['hint', 'nohint'], maxTurns: c.s.maxTurns, runtime: c.runtime === 'auto' ? undefined : c.runtime, runId, selection: c.s.selection, estimator: 'paired', signal: c.signal });
      if (r.cancelled || c.signal.aborted) return { code: 130 };
    } catch (e) {
      if (c.signal.aborted) return { code: 130 };
      return c.err(`train: evaluating ${model} failed: ${errorMessage(e)}`), { code: 1 };
    }
    ids[model] = runId;
    c.out(JSON.stringify({ event: 'evaluated', model, run_id: runId, adapter: model === 'checkpoint' ? c.adapter : null }));
  }
  const cmp = runs.compare(ids.base!, ids.checkpoint!);
  printComparison(c.out, ids.base!, ids.checkpoint!, c.adapter, cmp.rows);
  c.out(JSON.stringify({ event: 'compared', base: ids.base, checkpoint: ids.checkpoint, adapter: c.adapter }));
  return { code: 0, base: ids.base!, checkpoint: ids.checkpoint!, rows: cmp.rows };
}

const fmt = (v: number | null | undefined, d = 3): string => (v === null || v === undefined ? '-' : v.toFixed(d));
const signed = (v: number | null): string => (v === null ? '-' : `${v >= 0 ? '+' : ''}${v.toFixed(3)}`);

/** The before/after table: RunService.compare's rows, A = base, B = checkpoint. */
export function printComparison(out: (l: string) => void, base: string, checkpoint: string, adapter: string, rows: CompareRow[]): void {
  out(`before: run ${base} (base model)   after: run ${checkpoint} (checkpoint ${adapter})`);
  out(`${'environment'.padEnd(28)} ${'regret A'.padStart(9)} ${'regret B'.padStart(9)} ${'Δ regret'.padStart(9)} ${'win A'.padStart(7)} ${'win B'.padStart(7)} ${'Δ win'.padStart(7)}`);
  for (const r of rows) {
    out(`${(r.envName ?? r.envHash.slice(0, 12)).slice(0, 28).padEnd(28)} ${fmt(r.a?.regret).padStart(9)} ${fmt(r.b?.regret).padStart(9)} ${signed(r.regretDelta).padStart(9)} ${fmt(r.a?.winRate, 2).padStart(7)} ${fmt(r.b?.winRate, 2).padStart(7)} ${signed(r.winRateDelta).padStart(7)}`);
  }
  out(`compare: spade-workbench runs compare ${base} ${checkpoint}   (app: Runs → compare)`);
}
