/**
 * The job log as a person reads it: a metrics line (a JSON object, as SPADE's trainer and the
 * example run print them) becomes one short coloured line of `name value` pairs instead of raw
 * JSON; every other line is left as it is. Display only: offsets, search and download keep the file.
 */
const DIM = '\x1b[2m';
const CYAN = '\x1b[36m';
const RESET = '\x1b[0m';

function num(v: unknown): string {
  if (typeof v !== 'number') return typeof v === 'string' ? v : JSON.stringify(v);
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 1000 || Math.abs(v) < 0.001 ? v.toExponential(3) : v.toFixed(3);
}

export function formatLogLine(line: string): string {
  const t = line.trim();
  if (!t.startsWith('{') || !t.endsWith('}')) return line;
  let o: unknown;
  try {
    o = JSON.parse(t);
  } catch {
    return line;
  }
  if (!o || typeof o !== 'object' || Array.isArray(o)) return line;
  const entries = Object.entries(o as Record<string, unknown>);
  if (!entries.length) return line;
  const step = entries.find(([k]) => k === 'rollout/step' || k === 'step' || k === 'global_step');
  const rest = entries.filter((e) => e !== step);
  const head = step ? `${CYAN}step ${num(step[1])}${RESET}` : `${CYAN}metrics${RESET}`;
  return `${head}  ${rest.map(([k, v]) => `${DIM}${k}${RESET} ${num(v)}`).join('  ')}`;
}

/** A chunk of whole lines (the last may lack its newline). */
export function formatLogChunk(text: string): string {
  return text
    .split('\n')
    .map((l) => formatLogLine(l))
    .join('\n');
}

/** uPlot's x axis for rollout steps: whole-number ticks only (it drew 1.5). */
export const STEP_INCREMENTS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10_000, 20_000, 25_000, 50_000, 100_000, 200_000, 500_000, 1_000_000];

export function stepTickLabels(values: number[]): string[] {
  return values.map((v) => (Number.isInteger(v) ? String(v) : ''));
}
