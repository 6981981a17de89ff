import { readPyLiteral, type PyLiteralValue } from './pyLiteral';

/**
 * SPADE's metrics as a run's log and metrics.jsonl carry them (docs/spade-formats.md section 7,
 * "Metrics in the log"). One parser for the engine (the job's charts), the CLI (`jobs metrics
 * --log`) and the renderer (the log view), so all three read a line the same way. Pure: no Node.
 */

/** One value of one series: `x` is on the series' own axis (rollout/step, train/step, eval/step, step). */
export interface MetricPoint {
  axis: string;
  step: number;
  key: string;
  value: number;
}

/** A game's two returns and its regret, from SPADE's `[REGRET]` line; null where the number is not finite. */
export interface GameReturns {
  game: string;
  rHint: number | null;
  rNoHint: number | null;
  regret: number | null;
}

export type SlimeForm = 'perf' | 'rollout' | 'multi_turn' | 'passrate' | 'eval' | 'step';

/**
 * The `logger.info(f"<form> {id}: {log_dict}")` lines of Slime at bf14dc2 and the W&B step key each
 * one is logged under (every one prints the dict before adding its step key, except `step`):
 * - perf: slime/ray/rollout.py:1227 `_log_rollout_data` (SPADE's rollout metrics, from
 *   spade/slime/spade_rollout.py) and slime/utils/train_metric_utils.py:50 (perf/* timings);
 * - rollout, multi_turn, passrate: slime/backends/megatron_utils/data.py:206 `gather_log_data`
 *   (Megatron's training-batch summary, not SPADE's metrics);
 * - eval: slime/ray/rollout.py:1206 `_log_eval_rollout_data` (eval/<dataset>, gem_eval/*);
 * - step (or `<role>-step`): slime/backends/megatron_utils/model.py:818, id = the accumulated
 *   train step, which the dict also carries as `train/step`.
 * Each id is the rollout id, which is also the W&B step unless a run passes
 * `--wandb-always-use-train-step` (slime/utils/metric_utils.py:120; SPADE's scripts do not).
 */
export const SLIME_AXIS: Record<SlimeForm, string> = {
  perf: 'rollout/step',
  rollout: 'rollout/step',
  multi_turn: 'rollout/step',
  passrate: 'rollout/step',
  eval: 'eval/step',
  step: 'train/step',
};

/** JSON lines (metrics.jsonl, a trainer printing JSON) name their own x axis with one of these keys. */
const JSON_STEP_KEYS = ['rollout/step', 'train/step', 'eval/step', 'step', '_step', 'global_step'];

const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;
/** Ray's prefix on a line an actor or task printed: `(RolloutManager pid=123, ip=10.0.0.2) `. */
const RAY_PREFIX = /^\((?:[A-Za-z_][\w.:-]*(?: pid=\d+)?|pid=\d+)(?:, ip=[^)\s]+)?\) ?/;
/** Slime's logger format (slime/utils/logging_utils.py:19): `[%(asctime)s<prefix>] %(filename)s:%(lineno)d - `. */
const SLIME_LOGGER = /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[^\]]*\] [\w.-]+:\d+ - /;
const SLIME_LINE = /^(perf|rollout|multi_turn|passrate|eval|(?:[A-Za-z0-9_]+-)?step) (-?\d+): \{/;
/** spade/core/orchestrator.py:2051-2055 (`_finalize_regrets`), values printed with `:.3f`. */
// The name is one token (SPADE's game files have no spaces), so a flooded line costs one pass.
const REGRET_LINE = /\[REGRET\] ([^\s:]+\.py): R\(hint\)=([^\s,]+), R\(no_hint\)=([^\s,]+), regret=(\S+)/;

/** The message of a log line: without terminal colours, Ray's actor prefix and Slime's logger prefix. */
export function logMessage(line: string): string {
  let s = line.includes('\x1b') ? line.replace(ANSI, '') : line;
  s = s.replace(RAY_PREFIX, '');
  return s.replace(SLIME_LOGGER, '');
}

function points(rec: { [k: string]: PyLiteralValue }, axis: string, step: number, skip: string | null): MetricPoint[] {
  const out: MetricPoint[] = [];
  const add = (prefix: string, obj: { [k: string]: PyLiteralValue }, depth: number): void => {
    for (const [k, value] of Object.entries(obj)) {
      const key = prefix ? `${prefix}/${k}` : k;
      if (key === skip) continue;
      // A value that is not a finite number (a string such as rollout/mode 'async', a list, NaN) is
      // no point on a chart: that value alone is left out.
      if (typeof value === 'number' && Number.isFinite(value)) out.push({ axis, step, key, value });
      else if (typeof value === 'boolean') out.push({ axis, step, key, value: value ? 1 : 0 });
      else if (value && typeof value === 'object' && !Array.isArray(value) && depth < 4) add(key, value, depth + 1);
    }
  };
  add('', rec, 0);
  return out;
}

/** The Slime form a message starts with, its id and where its dict begins; null for other text. */
export function slimeForm(message: string): { form: SlimeForm; role: string; id: number; brace: number } | null {
  const m = SLIME_LINE.exec(message);
  if (!m) return null;
  const word = m[1]!;
  const form: SlimeForm = word.endsWith('step') ? 'step' : (word as SlimeForm);
  const role = form === 'step' && word !== 'step' ? word.slice(0, -'-step'.length) : '';
  return { form, role, id: Number(m[2]), brace: m[0].length - 1 };
}

function parseSlime(message: string): MetricPoint[] | null {
  const f = slimeForm(message);
  if (!f) return null;
  const lit = readPyLiteral(message, f.brace);
  if (!lit || !lit.value || typeof lit.value !== 'object' || Array.isArray(lit.value)) return null;
  const rec = lit.value;
  const axis = SLIME_AXIS[f.form];
  const own = rec[axis];
  const step = typeof own === 'number' && Number.isFinite(own) ? own : f.id;
  return points(rec, axis, step, axis);
}

function parseJson(line: string): MetricPoint[] {
  const brace = line.indexOf('{');
  if (brace < 0 || !line.includes('step"')) return [];
  const lit = readPyLiteral(line, brace);
  if (!lit || lit.truncated || !lit.value || typeof lit.value !== 'object' || Array.isArray(lit.value)) return [];
  const rec = lit.value;
  const axis = JSON_STEP_KEYS.find((k) => typeof rec[k] === 'number' && Number.isFinite(rec[k]));
  if (!axis) return [];
  return points(rec, axis, rec[axis] as number, axis);
}

/**
 * Metric points in one log line: one of Slime's printed Python dicts (behind Ray's and Slime's
 * prefixes), or a JSON object with a step key (metrics.jsonl as Tinker's ml_log writes it, alone
 * on its line or after a prefix). Anything else is plain log text.
 */
export function parseMetricLine(line: string): MetricPoint[] {
  if (!line.includes('{')) return [];
  const slime = parseSlime(logMessage(line));
  if (slime) return slime;
  return parseJson(line);
}

function finite(text: string): number | null {
  const n = Number(text.replace(/,$/, ''));
  return Number.isFinite(n) ? n : null;
}

/** SPADE's per-game line `[REGRET] <game>.py: R(hint)=…, R(no_hint)=…, regret=…`, or null. */
export function parseRegretLine(line: string): GameReturns | null {
  if (!line.includes('[REGRET]')) return null;
  const m = REGRET_LINE.exec(line.includes('\x1b') ? line.replace(ANSI, '') : line);
  if (!m) return null;
  return { game: m[1]!, rHint: finite(m[2]!), rNoHint: finite(m[3]!), regret: finite(m[4]!) };
}

export interface ParsedLog {
  points: MetricPoint[];
  /** One entry per game, in first-seen order; a later line for the same game replaces the numbers. */
  games: GameReturns[];
}

export function parseLogText(text: string): ParsedLog {
  const pts: MetricPoint[] = [];
  const games = new Map<string, GameReturns>();
  for (const line of text.split('\n')) {
    for (const p of parseMetricLine(line)) pts.push(p);
    const g = parseRegretLine(line);
    if (g) games.set(g.game, g);
  }
  return { points: pts, games: [...games.values()] };
}

/**
 * `jobs metrics --json`: `{"series": {KEY: [[x, value], ...]}, "axis": {KEY: AXIS}, "games": [...]}`.
 * A rollout's several lines merge under its id: the last value for an (x, key) pair stands.
 */
export function metricsJson(pts: MetricPoint[], games: GameReturns[]): {
  series: Record<string, [number, number][]>;
  axis: Record<string, string>;
  games: { game: string; r_hint: number | null; r_no_hint: number | null; regret: number | null }[];
} {
  const by = new Map<string, Map<number, number>>();
  const axis: Record<string, string> = {};
  for (const p of pts) {
    let s = by.get(p.key);
    if (!s) by.set(p.key, (s = new Map()));
    s.set(p.step, p.value);
    axis[p.key] = p.axis;
  }
  const series: Record<string, [number, number][]> = {};
  for (const key of [...by.keys()].sort()) series[key] = [...by.get(key)!.entries()].sort((a, b) => a[0] - b[0]);
  const sortedAxis: Record<string, string> = {};
  for (const key of Object.keys(series)) sortedAxis[key] = axis[key]!;
  return { series, axis: sortedAxis, games: games.map((g) => ({ game: g.game, r_hint: g.rHint, r_no_hint: g.rNoHint, regret: g.regret })) };
}
