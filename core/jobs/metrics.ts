import { readPyLiteral, type PyValue } from './pyLiteral';
import type { MetricPoint } from './store';

/** SPADE logs W&B points with `rollout/step` as the x axis; other trainers use `step`/`_step`. */
const STEP_KEYS = ['rollout/step', 'step', '_step', 'global_step'];

/**
 * Slime prints each rollout's metrics as `rollout <id>: {<Python dict repr>}`, often after a
 * logger prefix; `rollout/step` may be missing from the dict, and then the id is the step.
 */
const SLIME_LINE = /(?:^|[\s:\]|-])rollout (\d+): \{/;

function points(rec: Record<string, unknown>, step: number, skip: string | null): MetricPoint[] {
  const out: MetricPoint[] = [];
  const add = (prefix: string, obj: Record<string, unknown>, depth: number): void => {
    for (const [k, value] of Object.entries(obj)) {
      const key = prefix ? `${prefix}/${k}` : k;
      if (key === skip) continue;
      if (typeof value === 'number' && Number.isFinite(value)) out.push({ step, key, value });
      else if (typeof value === 'boolean') out.push({ step, key, value: value ? 1 : 0 });
      else if (value && typeof value === 'object' && !Array.isArray(value) && depth < 4) add(key, value as Record<string, unknown>, depth + 1);
    }
  };
  add('', rec, 0);
  return out;
}

function stepOf(rec: Record<string, unknown>): string | undefined {
  return STEP_KEYS.find((k) => typeof rec[k] === 'number' && Number.isFinite(rec[k]));
}

/** A Slime `rollout <id>: {...}` line, read as Python data (never evaluated). */
function parseSlimeLine(line: string): MetricPoint[] | null {
  const m = SLIME_LINE.exec(line);
  if (!m) return null;
  const brace = m.index + m[0].length - 1;
  const lit = readPyLiteral(line, brace);
  if (!lit || !lit.value || typeof lit.value !== 'object' || Array.isArray(lit.value)) return null;
  const rec = lit.value as Record<string, PyValue>;
  const own = typeof rec['rollout/step'] === 'number' && Number.isFinite(rec['rollout/step']) ? (rec['rollout/step'] as number) : null;
  return points(rec, own ?? Number(m[1]), own !== null ? 'rollout/step' : null);
}

/**
 * Metric points in one log line: Slime's printed Python dict (`rollout 3: {'rollout/mean_return':
 * 0.5}`), or a JSON object (alone on the line, or after a prefix such as a timestamp or
 * `metrics:`) with a numeric step key. Anything else is plain log text.
 */
export function parseMetricLine(line: string): MetricPoint[] {
  const brace = line.indexOf('{');
  if (brace < 0) return [];
  if (line.includes('rollout ')) {
    const slime = parseSlimeLine(line);
    if (slime) return slime;
  }
  if (!line.includes('step"')) return [];
  const end = line.lastIndexOf('}');
  if (end <= brace) return [];
  let obj: unknown;
  try {
    obj = JSON.parse(line.slice(brace, end + 1));
  } catch {
    return [];
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return [];
  const rec = obj as Record<string, unknown>;
  const stepKey = stepOf(rec);
  if (!stepKey) return [];
  return points(rec, rec[stepKey] as number, stepKey);
}

export function parseMetricText(text: string): MetricPoint[] {
  const out: MetricPoint[] = [];
  for (const line of text.split('\n')) {
    const pts = parseMetricLine(line);
    for (const p of pts) out.push(p);
  }
  return out;
}
