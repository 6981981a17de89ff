import { readPyLiteral, type PyLiteralValue } from '../api/pyLiteral';
import { DomainError } from '../errors';

/**
 * What a SPADE run leaves in its folder besides games: training checkpoints and SPADE's offline
 * evaluation. Pure readers of the names and files, shared by the engine and the CLI.
 *
 * - Slime/Megatron: SPADE's launchers pass `--save "${OUTPUT_DIR}/<save name>/"` with
 *   `--save-interval 16` (cmd/games/train_spade_8b.sh:69-75, cmd/tool_use/_train_spade_blend.sh:145-148).
 *   Slime saves with the rollout id as Megatron's iteration (slime bf14dc2
 *   slime/backends/megatron_utils/actor.py:581 `save(rollout_id, ...)`), so each checkpoint is an
 *   `iter_NNNNNNN` folder and the save folder's `latest_checkpointed_iteration.txt` names the newest
 *   (slime's own test of a Megatron checkpoint: slime/backends/megatron_utils/checkpoint.py:123-126;
 *   a converted base model's tracker says `release`: tools/convert_hf_to_torch_dist.py:134-139).
 *   A run given that folder as `--load` resumes at the iteration after it (actor.py:99) only when the
 *   tracker file is there (slime/utils/arguments.py:1713-1725).
 * - Tinker: tinker-cookbook (2c87e8f, SPADE's submodule) appends `{"name": "000032", "batch": 32,
 *   "state_path": "tinker://…", "sampler_path": "tinker://…"}` to `<log_path>/checkpoints.jsonl`
 *   (tinker_cookbook/checkpoint_utils.py:82-84, rl/train.py:733-739); SPADE's Tinker launchers set
 *   `log_path="$OUTPUT_DIR"` (cmd/tinker/qwen3_8b/train_spade_tinker.sh:139).
 * - Offline evaluation: `python -m eval_offline.run_offline_eval --ckpt … --output-dir DIR` writes
 *   `DIR/results.json` (eval_offline/run_offline_eval.py:277-278) as RunResult.to_dict gives it
 *   (eval_offline/results.py:32-44): ckpt, ckpt_resolved, started_at, elapsed_sec,
 *   per_suite_elapsed_sec, metrics {suite: {name: value}}, skipped [suite], errors {suite: traceback};
 *   `json.dumps(indent=2, default=str)` (results.py:48), so a NaN is written bare.
 */

export const MEGATRON_ITER = /^iter_(\d{7})$/;
export const MEGATRON_TRACKER = 'latest_checkpointed_iteration.txt';
export const TINKER_CHECKPOINTS = 'checkpoints.jsonl';
export const EVAL_RESULTS = 'results.json';

export interface Checkpoint {
  kind: 'megatron' | 'tinker';
  /** The rollout id (Megatron's iteration) or Tinker's batch; null for a `release` folder. */
  step: number | null;
  name: string;
  /** Where it is on the job's machine (Tinker: the state path on the service). */
  path: string;
  /** The one the save folder's tracker (or Tinker's last resumable line) names. */
  latest: boolean;
  samplerPath: string | null;
}

/** What `latest_checkpointed_iteration.txt` says: an iteration, `release`, or nothing readable. */
export function readTracker(text: string | null): number | 'release' | null {
  if (text === null) return null;
  const t = text.trim();
  if (t === 'release') return 'release';
  return /^\d{1,9}$/.test(t) ? Number(t) : null;
}

/** A Megatron save folder's checkpoints from its entry names, newest first. */
export function megatronCheckpoints(saveDir: string, names: string[], tracker: number | 'release' | null): Checkpoint[] {
  const out: Checkpoint[] = [];
  for (const n of names) {
    const m = MEGATRON_ITER.exec(n);
    if (m) out.push({ kind: 'megatron', step: Number(m[1]), name: n, path: `${saveDir}/${n}`, latest: tracker === Number(m[1]), samplerPath: null });
    else if (n === 'release') out.push({ kind: 'megatron', step: null, name: n, path: `${saveDir}/${n}`, latest: tracker === 'release', samplerPath: null });
  }
  return out.sort((a, b) => (b.step ?? -1) - (a.step ?? -1));
}

const str = (v: PyLiteralValue | undefined): string | null => (typeof v === 'string' ? v : null);

/** Tinker's checkpoints.jsonl; a line that is not a checkpoint record is skipped and counted. */
export function tinkerCheckpoints(text: string): { checkpoints: Checkpoint[]; skipped: number } {
  const out: Checkpoint[] = [];
  let skipped = 0;
  let resumable: Checkpoint | null = null;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const v = readJsonish(line);
    if (!v || typeof v !== 'object' || Array.isArray(v) || typeof v.name !== 'string' || typeof v.batch !== 'number' || !Number.isInteger(v.batch)) {
      skipped++;
      continue;
    }
    const c: Checkpoint = { kind: 'tinker', step: v.batch, name: v.name.slice(0, 200), path: (str(v.state_path) ?? str(v.sampler_path) ?? '').slice(0, 2000), latest: false, samplerPath: str(v.sampler_path)?.slice(0, 2000) ?? null };
    out.push(c);
    // tinker-cookbook resumes from the last line that has a state_path (checkpoint_utils.py:43-50).
    if (str(v.state_path)) resumable = c;
  }
  if (resumable) resumable.latest = true;
  return { checkpoints: out.sort((a, b) => (b.step ?? -1) - (a.step ?? -1)), skipped };
}

/** JSON as Python's json.dumps writes it (bare NaN/Infinity), newlines between tokens allowed. */
function readJsonish(text: string): PyLiteralValue | null {
  try {
    return JSON.parse(text) as PyLiteralValue;
  } catch {
    // Raw newlines only ever stand between tokens in JSON (inside strings they are escaped).
    const r = readPyLiteral(text.replace(/\n/g, ' ').trim());
    return r && !r.truncated ? r.value : null;
  }
}

export type EvalValue = number | string | boolean | null;

export interface EvalSuite {
  name: string;
  metrics: Record<string, EvalValue>;
  elapsedSec: number | null;
  skipped: boolean;
  /** The last line of the suite's traceback (results.py keeps the whole one). */
  error: string | null;
}

export interface EvalRun {
  /** Where results.json is on the job's machine. */
  path: string;
  ckpt: string;
  ckptResolved: string;
  startedAt: string | null;
  elapsedSec: number | null;
  /** The checkpoint's step, when its name or path says it (iter_NNNNNNN, a Tinker checkpoint's path). */
  step: number | null;
  suites: EvalSuite[];
}

const LIMITS = { suites: 100, metrics: 500, text: 300 };

function num(v: PyLiteralValue | undefined): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** A metric value as a cell: a finite number, a short string, a boolean, or null (NaN, inf, missing). */
function cell(v: PyLiteralValue): EvalValue {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'boolean' || v === null) return v;
  if (typeof v === 'string') return v.slice(0, LIMITS.text);
  return JSON.stringify(v).slice(0, LIMITS.text);
}

/** The step a checkpoint label names: Megatron's `iter_0000031` anywhere in it. */
export function stepInLabel(label: string): number | null {
  const m = /(?:^|[/_-])iter_(\d{7})(?=$|[/_.-])/.exec(label);
  return m ? Number(m[1]) : null;
}

/** Reads eval_offline's results.json; a file of another shape is a clear error, not an empty table. */
export function parseEvalResults(path: string, text: string): EvalRun {
  const v = readJsonish(text);
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new DomainError('invalid_input', `${path} is not eval_offline's results.json (not a JSON object)`);
  const metrics = v.metrics;
  if (!metrics || typeof metrics !== 'object' || Array.isArray(metrics)) throw new DomainError('invalid_input', `${path} is not eval_offline's results.json (no "metrics" object of suites)`);
  const elapsed = v.per_suite_elapsed_sec && typeof v.per_suite_elapsed_sec === 'object' && !Array.isArray(v.per_suite_elapsed_sec) ? v.per_suite_elapsed_sec : {};
  const skipped = new Set(Array.isArray(v.skipped) ? v.skipped.filter((s): s is string => typeof s === 'string') : []);
  const errors = v.errors && typeof v.errors === 'object' && !Array.isArray(v.errors) ? v.errors : {};
  const names = new Set([...Object.keys(metrics), ...skipped, ...Object.keys(errors)]);
  const suites: EvalSuite[] = [];
  for (const name of [...names].slice(0, LIMITS.suites)) {
    const m = metrics[name];
    const out: Record<string, EvalValue> = {};
    if (m && typeof m === 'object' && !Array.isArray(m)) for (const [k, val] of Object.entries(m).slice(0, LIMITS.metrics)) out[k.slice(0, LIMITS.text)] = cell(val);
    const err = str(errors[name]);
    suites.push({
      name: name.slice(0, LIMITS.text),
      metrics: out,
      elapsedSec: num(elapsed[name]),
      skipped: skipped.has(name),
      error: err ? (err.trim().split('\n').pop() ?? '').slice(0, LIMITS.text) : null,
    });
  }
  const ckpt = (str(v.ckpt) ?? '').slice(0, 2000);
  const ckptResolved = (str(v.ckpt_resolved) ?? '').slice(0, 2000);
  return {
    path,
    ckpt,
    ckptResolved,
    startedAt: str(v.started_at)?.slice(0, 40) ?? null,
    elapsedSec: num(v.elapsed_sec),
    step: stepInLabel(ckpt) ?? stepInLabel(ckptResolved) ?? stepInLabel(path),
    suites,
  };
}

/** The eval runs, each given the step of the checkpoint it evaluated where a Tinker path names it; ordered by step. */
export function matchEvals(evals: EvalRun[], checkpoints: Checkpoint[]): EvalRun[] {
  const byPath = new Map<string, number>();
  for (const c of checkpoints) {
    if (c.step === null) continue;
    for (const p of [c.path, c.samplerPath]) if (p) byPath.set(p.replace(/\/$/, ''), c.step);
  }
  const out = evals.map((e) => ({ ...e, step: e.step ?? byPath.get(e.ckpt.replace(/\/$/, '')) ?? byPath.get(e.ckptResolved.replace(/\/$/, '')) ?? null }));
  return out.sort((a, b) => (a.step ?? Infinity) - (b.step ?? Infinity) || (a.startedAt ?? '').localeCompare(b.startedAt ?? '') || a.path.localeCompare(b.path));
}
