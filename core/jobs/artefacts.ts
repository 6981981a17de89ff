import { posix } from 'node:path';
import type { JobArtefacts, LaunchInput } from '../api/calls/jobs';
import { DomainError } from '../errors';
import {
  EVAL_RESULTS,
  MEGATRON_ITER,
  MEGATRON_TRACKER,
  TINKER_CHECKPOINTS,
  matchEvals,
  megatronCheckpoints,
  parseEvalResults,
  readTracker,
  tinkerCheckpoints,
  type Checkpoint,
  type EvalRun,
} from './artefactFormats';
import type { Recipe } from './recipes';
import { jobPaths, machineHome, outputPath, type JobPaths } from './script';
import { isTerminal, type FileEntry, type JobRecord, type Transport } from './types';

/**
 * A run's artefacts read from its folder over the job's own connection (this machine, the SSH host,
 * Slurm's submit host): checkpoints with their steps, SPADE's offline evaluations, and whether the
 * run can be continued from its newest checkpoint (`LOAD_DIR`). Nothing is copied back.
 */

/** Bounds on what is read from a folder the job wrote (a hostile or huge run must not stall a poll). */
const LIMITS = { entries: 2000, dirs: 60, depth: 3, evals: 50, resultsBytes: 4 << 20, jsonlBytes: 4 << 20 };

/**
 * The run's folder: OUTPUT_DIR as the job was given it (SPADE's launchers write everything under it;
 * relative to the working directory, where the job script runs), else the folder above the outputs
 * named for it (an attached run's spade_games_cache or metrics.jsonl).
 */
export function runDirOf(job: JobRecord, paths: JobPaths): string | null {
  const out = job.spec.env.OUTPUT_DIR;
  if (out) return outputPath(out, paths);
  const o = job.spec.outputs;
  for (const p of [o.cacheDir, o.metricsFile, o.gamesDir]) {
    const abs = outputPath(p, paths);
    if (abs) return posix.dirname(abs);
  }
  return null;
}

/** SPADE's own folders in a run, never searched for checkpoints or results (thousands of games). */
const NOT_SEARCHED = /^(spade_games|spade_games_cache|spade_games_rejected|\.spade_workbench|__pycache__|\..*)$/;

async function readSmall(t: Transport, e: FileEntry, max: number): Promise<string | null> {
  // Only a regular-looking file of a known size is opened: a FIFO (size 0) would block the read.
  if (e.isDir || e.size <= 0 || e.size > max) return null;
  const chunk = await t.readChunk(e.path, 0, max);
  return chunk ? chunk.data.toString('utf8') : null;
}

export type ReadArtefacts = Omit<JobArtefacts, 'continuable' | 'continueNote'>;

export async function readRunArtefacts(t: Transport, runDir: string): Promise<ReadArtefacts> {
  const problems: { path: string; message: string }[] = [];
  const saveDirs: JobArtefacts['saveDirs'] = [];
  const checkpoints: (Checkpoint & { mtime: number | null })[] = [];
  const evals: EvalRun[] = [];
  const top = await t.list(runDir);
  if (!top) return { runDir, note: `The run folder ${runDir} is not there (yet) on ${t.label}.`, saveDirs, checkpoints, evals, problems };
  const queue: { dir: string; entries: FileEntry[]; depth: number }[] = [{ dir: runDir, entries: top, depth: 0 }];
  let listed = 1;
  while (queue.length) {
    const { dir, entries, depth } = queue.shift()!;
    if (entries.length > LIMITS.entries) problems.push({ path: dir, message: `${entries.length} entries: only the first ${LIMITS.entries} were looked at` });
    const shown = entries.slice(0, LIMITS.entries).sort((a, b) => a.name.localeCompare(b.name));
    const names = shown.map((e) => e.name);
    const tracker = shown.find((e) => e.name === MEGATRON_TRACKER);
    const iters = shown.filter((e) => e.isDir && MEGATRON_ITER.test(e.name));
    let isSave = Boolean(tracker);
    if (!isSave && iters.length) {
      // No tracker (yet): a save folder only if an iter_ folder holds Megatron's common.pt
      // (scripts/convert_ckpt_to_hf.sh:33); otherwise iter_ is just a name, e.g. eval outputs per checkpoint.
      isSave = Boolean((await t.list(iters[iters.length - 1]!.path))?.some((e) => e.name === 'common.pt'));
      listed++;
    }
    if (isSave) {
      // A Megatron save folder (`--save`): its iter_ folders are the checkpoints; nothing below is searched.
      const said = readTracker(tracker ? await readSmall(t, tracker, 64) : null);
      const cps = megatronCheckpoints(dir, names, said);
      saveDirs.push({ path: dir, kind: 'megatron', latest: typeof said === 'number' ? said : null, tracker: said === null ? null : String(said), checkpoints: cps.length });
      checkpoints.push(...cps.map((c) => ({ ...c, mtime: shown.find((e) => e.name === c.name)?.mtime ?? null })));
      continue;
    }
    const jsonl = shown.find((e) => e.name === TINKER_CHECKPOINTS && !e.isDir);
    if (jsonl) {
      const text = await readSmall(t, jsonl, LIMITS.jsonlBytes);
      if (text === null) problems.push({ path: jsonl.path, message: `not read: ${jsonl.size} bytes` });
      else {
        const r = tinkerCheckpoints(text);
        if (r.skipped) problems.push({ path: jsonl.path, message: `${r.skipped} line(s) that are not checkpoint records were skipped` });
        const latest = r.checkpoints.find((c) => c.latest);
        saveDirs.push({ path: dir, kind: 'tinker', latest: latest?.step ?? null, tracker: null, checkpoints: r.checkpoints.length });
        checkpoints.push(...r.checkpoints.map((c) => ({ ...c, mtime: jsonl.mtime as number | null })));
      }
    }
    const results = shown.find((e) => e.name === EVAL_RESULTS && !e.isDir);
    if (results && evals.length < LIMITS.evals) {
      const text = await readSmall(t, results, LIMITS.resultsBytes);
      if (text === null) problems.push({ path: results.path, message: results.size > LIMITS.resultsBytes ? `${results.size} bytes: larger than eval_offline writes, not read` : 'empty or not a plain file' });
      else {
        try {
          evals.push(parseEvalResults(results.path, text));
        } catch (e) {
          problems.push({ path: results.path, message: (e as Error).message });
        }
      }
    }
    if (depth >= LIMITS.depth) continue;
    for (const e of shown) {
      if (!e.isDir || NOT_SEARCHED.test(e.name)) continue;
      if (listed >= LIMITS.dirs) {
        problems.push({ path: dir, message: `stopped after ${LIMITS.dirs} folders: results further down are not shown` });
        queue.length = 0;
        break;
      }
      const sub = await t.list(e.path);
      listed++;
      if (sub) queue.push({ dir: e.path, entries: sub, depth: depth + 1 });
    }
  }
  return { runDir, note: null, saveDirs, checkpoints: checkpoints.map(toApi), evals: matchEvals(evals, checkpoints), problems };
}

function toApi(c: Checkpoint & { mtime: number | null }): JobArtefacts['checkpoints'][number] {
  return { kind: c.kind, step: c.step, name: c.name, path: c.path, latest: c.latest, samplerPath: c.samplerPath, mtime: c.mtime };
}

/** Whether the recipe's script reads LOAD_DIR (the recipe lists exactly the variables its script reads). */
export function readsLoadDir(recipe: Recipe | undefined): boolean {
  return Boolean(recipe && [...recipe.requiredEnv, ...recipe.optionalEnv].includes('LOAD_DIR'));
}

/** From which save folder a run can continue, or why it cannot. */
export function continueOffer(job: JobRecord, recipe: Recipe | undefined, a: ReadArtefacts): { loadDir: string; step: number } | { why: string } {
  if (job.spec.attached) return { why: 'the workbench did not launch this run, so it has no recipe to launch again' };
  if (!job.recipe) return { why: 'this job was launched without a recipe' };
  if (!recipe) return { why: `recipe ${job.recipe} is not among this workbench's recipes` };
  if (!readsLoadDir(recipe)) return { why: `${recipe.spadeScript ?? recipe.id} does not read LOAD_DIR, so it cannot continue from a checkpoint` };
  const ready = a.saveDirs.filter((s) => s.kind === 'megatron' && s.latest !== null).sort((x, y) => y.latest! - x.latest!);
  if (!ready.length) return { why: `no Megatron save folder with ${MEGATRON_TRACKER} in ${a.runDir ?? 'the run folder'} yet (SPADE's scripts save every 16 rollouts)` };
  return { loadDir: ready[0]!.path, step: ready[0]!.latest! };
}

/**
 * The launch that continues a run: the same recipe, machine, working directory, variables and
 * secrets' names, with LOAD_DIR set to the run's save folder. The new run writes to its own folder;
 * SPADE's script seeds its environment memory from the old run's (dirname LOAD_DIR's
 * spade_games_cache/env_memory.json, cmd/games/train_spade_8b.sh:46-53) and Slime resumes at the
 * iteration after the tracker's.
 */
export function continueInput(job: JobRecord, recipe: Recipe | undefined, a: ReadArtefacts, loadDir?: string): LaunchInput {
  if (!isTerminal(job.state)) throw new DomainError('conflict', `${job.name} is still ${job.state}: stop it before continuing it (both would train from the same checkpoint)`);
  const offer = continueOffer(job, recipe, a);
  if ('why' in offer) throw new DomainError('invalid_input', `${job.name} cannot be continued: ${offer.why}`);
  let from = offer;
  if (loadDir !== undefined) {
    const s = a.saveDirs.find((d) => d.path === loadDir.replace(/\/$/, ''));
    if (!s || s.kind !== 'megatron' || s.latest === null) {
      throw new DomainError('invalid_input', `${loadDir} is not a save folder of this run with ${MEGATRON_TRACKER}; these are: ${a.saveDirs.filter((d) => d.latest !== null).map((d) => d.path).join(', ') || 'none'}`);
    }
    from = { loadDir: s.path, step: s.latest };
  }
  const ray = job.spec.ray;
  return {
    name: `${job.name} (from step ${from.step})`.slice(0, 200),
    backend: job.backend,
    recipe: job.recipe!,
    workdir: job.spec.workdir,
    env: { ...job.spec.env, LOAD_DIR: from.loadDir },
    secretEnv: job.spec.secretEnv,
    ...(job.spec.ssh ? { ssh: job.spec.ssh } : {}),
    ...(job.spec.slurm ? { slurm: job.spec.slurm } : {}),
    // The head it submits to, never the Ray job the old run submitted.
    ...(ray ? { ray: job.backend === 'ray' ? { ...ray, submissionId: undefined } : { address: ray.address } } : {}),
    importEnvironments: job.spec.importEnvironments,
  };
}

/** Everything the job view and `jobs artefacts` show, read now over the job's connection. */
export async function jobArtefacts(job: JobRecord, t: Transport | null, recipe: Recipe | undefined): Promise<JobArtefacts> {
  const empty: ReadArtefacts = { runDir: null, note: null, saveDirs: [], checkpoints: [], evals: [], problems: [] };
  let a: ReadArtefacts;
  if (!t) a = { ...empty, note: 'This job is reached through a Ray head only: its folder cannot be read (give its SSH host to read files).' };
  else {
    const runDir = runDirOf(job, jobPaths(job, await machineHome(t)));
    a = runDir ? await readRunArtefacts(t, runDir) : { ...empty, note: 'This job names no run folder (no OUTPUT_DIR, no outputs).' };
  }
  const offer = continueOffer(job, recipe, a);
  return { ...a, continuable: 'why' in offer ? null : offer, continueNote: 'why' in offer ? offer.why : `continues from ${offer.loadDir} (step ${offer.step}) as a new run` };
}
