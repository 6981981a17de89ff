import { readPyLiteral, type PyLiteralValue } from '../../../../core/api/pyLiteral';
import { logMessage, slimeForm } from '../../../../core/api/spadeMetrics';

/**
 * The job log as a person reads it: a metrics line (a JSON object as metrics.jsonl and the example
 * run print them, or one of Slime's `perf N: {...}` dicts behind Ray's and Slime's prefixes) becomes
 * one short coloured line of `name value` pairs; every other line is left as it is. Display only:
 * offsets, search and download keep the file. The line is read with the charts' own parser.
 */
const DIM = '\x1b[2m';
const CYAN = '\x1b[36m';
const RESET = '\x1b[0m';
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

function num(v: unknown): string {
  if (typeof v !== 'number') return typeof v === 'string' ? v : JSON.stringify(v);
  if (Number.isInteger(v)) return String(v);
  if (!Number.isFinite(v)) return String(v);
  return Math.abs(v) >= 1000 || Math.abs(v) < 0.001 ? v.toExponential(3) : v.toFixed(3);
}

function pairs(entries: [string, PyLiteralValue][]): string {
  return entries.map(([k, v]) => `${DIM}${k}${RESET} ${num(v)}`).join('  ');
}

/** Slime's `<form> <id>: {dict}` line, shortened: its prefixes dimmed, the form and id in colour. */
function formatSlime(line: string): string | null {
  const message = logMessage(line);
  const f = slimeForm(message);
  if (!f) return null;
  const lit = readPyLiteral(message, f.brace);
  if (!lit || !lit.value || typeof lit.value !== 'object' || Array.isArray(lit.value)) return null;
  // The message is what is left of the line once colours and prefixes are gone: the prefix is the rest.
  const plain = line.replace(ANSI, '');
  const prefix = plain.slice(0, plain.length - message.length).trim();
  const head = `${CYAN}${f.role ? `${f.role}-` : ''}${f.form} ${f.id}${RESET}`;
  return `${prefix ? `${DIM}${prefix}${RESET} ` : ''}${head}  ${pairs(Object.entries(lit.value))}`;
}

export function formatLogLine(line: string): string {
  if (!line.includes('{')) return line;
  const slime = formatSlime(line);
  if (slime) return slime;
  const t = line.trim();
  if (!t.startsWith('{') || !t.endsWith('}')) return line;
  const lit = readPyLiteral(t, 0);
  if (!lit || lit.truncated || lit.end !== t.length) return line;
  const o = lit.value;
  if (!o || typeof o !== 'object' || Array.isArray(o)) return line;
  const entries = Object.entries(o);
  if (!entries.length) return line;
  const step = entries.find(([k]) => k === 'rollout/step' || k === 'step' || k === 'global_step');
  const rest = entries.filter((e) => e !== step);
  const head = step ? `${CYAN}step ${num(step[1])}${RESET}` : `${CYAN}metrics${RESET}`;
  return `${head}  ${pairs(rest)}`;
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

/**
 * A chart's y range that fits its data: the lowest to the highest value with a little room, and a
 * small band around a value that never changes (uPlot's default drew one reward of 0 on 0..100).
 */
export function fitRange(min: number | null, max: number | null): [number, number] {
  if (min === null || max === null || !Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  if (max === min) {
    const pad = Math.abs(min) * 0.1 || 0.1;
    return [min - pad, max + pad];
  }
  const pad = (max - min) * 0.08;
  return [min - pad, max + pad];
}
