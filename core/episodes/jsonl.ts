/**
 * Episodes as JSONL: one self-sufficient line per episode (environment source, seed, hint, budget,
 * every step). One zod schema reads and describes a line; a bad line is skipped with its reason.
 */
import { z } from 'zod';
import type { EpisodeMeta, StepRecord } from './episodeStore';
import { errorMessage } from '../api/errorMessage';
import { runtimeKindSchema } from '../api/schemas';
import { spadeStepSchema } from '../api/calls/episodes';

const errorSchema = z.object({ kind: z.string(), type: z.string(), message: z.string(), traceback: z.string().optional(), line: z.number().int().optional() }).passthrough();

const stepLineSchema = z.object({
  kind: z.enum(['reset', 'step'], { message: 'kind must be reset or step' }),
  action: z.string().nullable().catch(null),
  rawAction: z.string().nullable().catch(null),
  seed: z.number().int().nullable().catch(null),
  observation: z.string().nullable().catch(null),
  reward: z.number().nullable().catch(null),
  terminated: z.boolean().catch(false),
  truncated: z.boolean().catch(false),
  info: z.record(z.string(), z.unknown()).catch({}),
  error: errorSchema.nullable().catch(null),
  state: z.unknown().optional(),
  types: z.array(z.string()).nullable().catch(null),
  spade: spadeStepSchema.nullable().optional().catch(null),
});

const ORIGINS = ['played', 'imported', 'replay', 'regret'] as const;

export const episodeLineSchema = z
  .object({
    format: z.literal('spade-workbench.episode', { message: 'not a spade-workbench episode (format field missing or different)' }),
    version: z.number().int().optional(),
    envHash: z.string().regex(/^[0-9a-f]{64}$/).nullable().optional().catch(null),
    envName: z.string().nullable().catch(null),
    className: z.string().nullable().catch(null),
    source: z.string().nullable().catch(null),
    seed: z.number().int().nullable().catch(null),
    hint: z.object({ enabled: z.boolean().catch(false), text: z.string().nullable().catch(null) }).catch({ enabled: false, text: null }),
    maxTurns: z.number().int().positive().catch(30),
    runtime: runtimeKindSchema.catch('pyodide'),
    policy: z.record(z.string(), z.unknown()).catch({}),
    origin: z.enum(ORIGINS).catch('imported'),
    label: z.string().catch(''),
    meta: z.record(z.string(), z.unknown()).catch({}),
    createdAt: z.string().optional(),
    steps: z.array(stepLineSchema, { message: 'steps missing' }),
  })
  .refine((o) => !!o.envHash || !!o.source, { message: 'neither envHash nor source' });

export type EpisodeLine = z.infer<typeof episodeLineSchema>;

export interface ParsedLine {
  envHash: string;
  envName: string | null;
  className: string | null;
  source: string | null;
  seed: number | null;
  hintEnabled: boolean;
  hintText: string | null;
  maxTurns: number;
  runtime: string;
  policy: Record<string, unknown>;
  origin: EpisodeMeta['origin'];
  label: string;
  meta: Record<string, unknown>;
  steps: StepRecord[];
}

/** Validates one exported episode line; returns a reason string when it cannot be used. */
export function parseEpisodeLine(o: unknown): ParsedLine | string {
  const r = episodeLineSchema.safeParse(o);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const where = issue.path.length ? `${issue.path.join('.')}: ` : '';
    return `${where}${issue.message}`;
  }
  const v = r.data;
  return {
    envHash: v.envHash ?? '',
    envName: v.envName,
    className: v.className,
    source: v.source,
    seed: v.seed,
    hintEnabled: v.hint.enabled,
    hintText: v.hint.text,
    maxTurns: v.maxTurns,
    runtime: v.runtime,
    policy: v.policy,
    origin: v.origin,
    label: v.label,
    meta: v.meta,
    steps: v.steps.map((s, idx) => ({ ...s, idx, state: s.state ?? null, spade: s.spade ?? null, error: (s.error as StepRecord['error']) ?? null })),
  };
}

export function episodeLine(m: EpisodeMeta, source: string | null, steps: StepRecord[]): string {
  return JSON.stringify({
    format: 'spade-workbench.episode',
    version: 1,
    envHash: m.envHash,
    envName: m.envName,
    className: m.className,
    source,
    seed: m.seed,
    hint: { enabled: m.hintEnabled, text: m.hintText },
    maxTurns: m.maxTurns,
    runtime: m.runtime,
    policy: m.policy,
    origin: m.origin,
    label: m.label,
    meta: m.meta,
    createdAt: m.createdAt,
    steps,
  });
}

/** Splits a JSONL text into parsed lines and skipped ones (blank lines ignored). */
export function readEpisodeLines(text: string): { line: number; parsed: ParsedLine | string }[] {
  const out: { line: number; parsed: ParsedLine | string }[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim()) return;
    let o: unknown;
    try {
      o = JSON.parse(line);
    } catch (e) {
      out.push({ line: i + 1, parsed: `not JSON: ${errorMessage(e)}` });
      return;
    }
    out.push({ line: i + 1, parsed: parseEpisodeLine(o) });
  });
  return out;
}
