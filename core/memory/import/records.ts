/**
 * Reading the fields of a structured record (a manifest line, a JSONL line, a spec file) into an
 * environment candidate, and the small readers every layout shares.
 */
import { createReadStream } from 'node:fs';
import { errorMessage } from '../../api';
import { MANIFEST_FROM, normaliseSkill } from '../parse';
import type { EnvCandidate, EnvStats } from '../repository';

export const fileKeys = ['file', 'game_file', 'path', 'filename', 'py_file', 'env_file', 'source_file'];
export function entryFile(e: Record<string, unknown>): string | null {
  for (const k of fileKeys) if (typeof e[k] === 'string' && e[k]) return e[k] as string;
  return null;
}

export function numOrNull(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() && Number.isFinite(Number(v))) return Number(v);
  return null;
}

export function errReason(e: unknown): string {
  const code = (e as NodeJS.ErrnoException)?.code;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied (unreadable)';
  if (code === 'ELOOP') return 'symlink loop';
  if (code === 'ENOENT') return 'missing (broken link or removed during import)';
  if (code === 'EISDIR') return 'is a directory';
  return errorMessage(e);
}

/** The reason's kind, for counting: the words before any detail ("broken JSON: Unexpected token" -> "broken JSON"). */
export function reasonKind(reason: string): string {
  return reason.split(/[:(]/, 1)[0]!.trim() || reason.slice(0, 60);
}

/** The fields every structured source (manifest line, JSONL line, spec file) may carry. */
const consumedKeys = new Set([
  'code', 'source', 'hint', 'hint_full', 'skill', 'name', 'class_name', 'kind', 'tags', 'seed', 'notes', 'rating',
  'rejected', 'rejection_stage', 'stage', 'rejection_reason', 'reason', 'validation', 'valid', 'status',
  'win_rate', 'actor_win_rate', 'regret', 'r_hint', 'r_no_hint', 'rollout_step', 'rollout_id', 'rollout', 'training_step', 'step',
  'source_run', 'run', 'hash', 'file_stem', 'flags', MANIFEST_FROM, ...fileKeys,
  // Derived from the numbers above when exported (exporter.ts): never kept as the game's metadata.
  'spade_blend',
]);

export function fieldsFromRecord(o: Record<string, unknown>): Partial<EnvCandidate> {
  const out: Partial<EnvCandidate> = {};
  const hint = typeof o.hint_full === 'string' && o.hint_full ? o.hint_full : typeof o.hint === 'string' && o.hint ? o.hint : null;
  if (hint) out.hint = hint;
  const skill = normaliseSkill(o.skill);
  if (skill) out.skill = skill;
  // Our own manifests say `skill: null` for "not known": that beats the `unknown` slug a SPADE file name needs.
  else if (o.skill === null) out.skill = null;
  const name = typeof o.name === 'string' && /^\w+$/.test(o.name) ? o.name : typeof o.class_name === 'string' ? o.class_name : null;
  if (name) out.name = name;
  if (o.kind === 'game' || o.kind === 'tool-use') out.kind = o.kind;
  if (Array.isArray(o.tags)) out.tags = o.tags.filter((t): t is string => typeof t === 'string' && /^[^\s,]{1,64}$/.test(t));
  if (o.seed === true) out.seed = true;
  if (typeof o.notes === 'string') out.notes = o.notes;
  const rating = numOrNull(o.rating);
  if (rating !== null && Number.isInteger(rating) && rating >= 0 && rating <= 5) out.rating = rating;
  if (o.rejected === true || typeof o.rejection_stage === 'string') {
    const stage = typeof o.rejection_stage === 'string' ? o.rejection_stage : typeof o.stage === 'string' ? o.stage : null;
    const reason = typeof o.rejection_reason === 'string' ? o.rejection_reason : typeof o.reason === 'string' ? o.reason : null;
    out.rejected = { stage, reason };
  }
  if (typeof o.validation === 'string') out.validation = o.validation;
  else if (typeof o.valid === 'boolean') out.validation = o.valid ? 'valid' : 'invalid';
  else if (typeof o.status === 'string') out.validation = o.status;
  if (Array.isArray(o.flags)) out.flags = o.flags.filter((f): f is string => typeof f === 'string');
  const stats: EnvStats = {};
  const win = numOrNull(o.win_rate) ?? numOrNull(o.actor_win_rate);
  if (win !== null) stats.winRate = win;
  for (const [k, key] of [['regret', 'regret'], ['r_hint', 'rHint'], ['r_no_hint', 'rNoHint']] as const) {
    const v = numOrNull(o[k]);
    if (v !== null) stats[key] = v;
  }
  if (Object.keys(stats).length) out.stats = stats;
  const step = numOrNull(o.rollout_step) ?? numOrNull(o.rollout_id) ?? numOrNull(o.rollout) ?? numOrNull(o.training_step) ?? numOrNull(o.step);
  if (step !== null && Number.isInteger(step)) out.rolloutStep = step;
  // Likewise `rollout_step: null` beats the 00000 in the file name.
  else if (o.rollout_step === null) out.rolloutStep = null;
  const run = typeof o.source_run === 'string' ? o.source_run : typeof o.run === 'string' ? o.run : null;
  if (run) out.run = run;
  if (typeof o.file_stem === 'string') out.fileStem = o.file_stem;
  const meta = Object.fromEntries(Object.entries(o).filter(([k]) => !consumedKeys.has(k)));
  if (Object.keys(meta).length) out.meta = meta;
  return out;
}

export function merge(base: EnvCandidate, extra: Partial<EnvCandidate>): EnvCandidate {
  const out: EnvCandidate = { ...base };
  for (const [k, v] of Object.entries(extra) as [keyof EnvCandidate, never][]) {
    // An explicit null skill or step (our manifest's "not known") replaces a guess from the file name.
    if (v === undefined || (v === null && k !== 'rolloutStep' && k !== 'skill')) continue;
    if (k === 'flags') out.flags = [...(base.flags ?? []), ...(v as string[])];
    else if (k === 'meta') out.meta = { ...(base.meta ?? {}), ...(v as Record<string, unknown>) };
    else if (k === 'tags') out.tags = [...new Set([...(base.tags ?? []), ...(v as string[])])];
    else (out as unknown as Record<string, unknown>)[k] = v;
  }
  return out;
}

/** Splits a byte stream on newlines without holding more than one line (bounded) in memory. */
export async function* readLines(path: string, maxLine: number): AsyncGenerator<{ n: number; bytes: Buffer | null }> {
  let carry: Buffer[] = [];
  let carryLen = 0;
  let oversized = false;
  let n = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) break;
      n++;
      const part = chunk.subarray(start, nl);
      if (oversized || carryLen + part.length > maxLine) yield { n, bytes: null };
      else yield { n, bytes: carry.length ? Buffer.concat([...carry, part]) : part };
      carry = [];
      carryLen = 0;
      oversized = false;
      start = nl + 1;
    }
    const rest = chunk.subarray(start);
    if (rest.length) {
      if (carryLen + rest.length > maxLine) {
        oversized = true;
        carry = [];
        carryLen = 0;
      } else if (!oversized) {
        carry.push(Buffer.from(rest));
        carryLen += rest.length;
      }
    }
  }
  if (carryLen || oversized) yield { n: n + 1, bytes: oversized ? null : Buffer.concat(carry) };
}
