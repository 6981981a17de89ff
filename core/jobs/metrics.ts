import type { MetricPoint } from './store';

/** SPADE logs W&B points with `rollout/step` as the x axis; other trainers use `step`/`_step`. */
const STEP_KEYS = ['rollout/step', 'step', '_step', 'global_step'];

/**
 * Metric points in one log line: a JSON object (alone on the line, or after a prefix such as a
 * timestamp or `metrics:`) with a numeric step key. Anything else is plain log text.
 */
export function parseMetricLine(line: string): MetricPoint[] {
  const brace = line.indexOf('{');
  if (brace < 0 || !line.includes('step"')) return [];
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
  const stepKey = STEP_KEYS.find((k) => typeof rec[k] === 'number' && Number.isFinite(rec[k]));
  if (!stepKey) return [];
  const step = rec[stepKey] as number;
  const out: MetricPoint[] = [];
  for (const [key, value] of Object.entries(rec)) {
    if (key === stepKey) continue;
    if (typeof value === 'number' && Number.isFinite(value)) out.push({ step, key, value });
    else if (typeof value === 'boolean') out.push({ step, key, value: value ? 1 : 0 });
  }
  return out;
}

export function parseMetricText(text: string): MetricPoint[] {
  const out: MetricPoint[] = [];
  for (const line of text.split('\n')) {
    const pts = parseMetricLine(line);
    for (const p of pts) out.push(p);
  }
  return out;
}
