import { z } from 'zod';
import { hashSchema } from '../schemas';
import { defineCall, defineEvent } from '../contract';
import { runOutput } from './models';

/**
 * Model runs as records: every models.play run is kept (configuration, status, one row per
 * episode, what it measured per environment), listed, reopened, compared, cancelled and resumed.
 * A failed episode has no return: it is counted apart and never enters a mean.
 */

const runIdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ or -, at most 64');
const statusSchema = z.enum(['running', 'done', 'cancelled', 'failed']);

const runRecordSchema = z.object({
  id: z.string(),
  model: z.string(),
  endpoint: z.string(),
  config: z.object({ endpoint: z.record(z.string(), z.unknown()), sampling: z.record(z.string(), z.unknown()), hintText: z.string().nullable().optional() }),
  hintSource: z.string(),
  seeds: z.number().int(),
  seedStart: z.number().int(),
  arms: z.array(z.enum(['hint', 'nohint'])),
  maxTurns: z.number().int(),
  runtime: z.string(),
  selection: z.string().nullable(),
  hashes: z.array(z.string()),
  status: statusSchema,
  error: z.string().nullable(),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  updatedAt: z.string(),
});

const countsSchema = z.object({ total: z.number().int(), ok: z.number().int(), failed: z.number().int(), expected: z.number().int() });

const runEpisodeSchema = z.object({
  envHash: z.string(),
  hint: z.boolean(),
  seed: z.number().int(),
  status: z.enum(['ok', 'failed']),
  ret: z.number().nullable(),
  endedBy: z.string(),
  error: z.string().nullable(),
  episodeId: z.number().int().nullable(),
});

const measurementSchema = z.object({
  rHint: z.number().nullable(),
  rNoHint: z.number().nullable(),
  regret: z.number().nullable(),
  winRate: z.number().nullable(),
  difficulty: z.number().nullable(),
  hintFailed: z.boolean(),
  okHint: z.number().int(),
  okNoHint: z.number().int(),
  failed: z.number().int(),
  seeds: z.array(z.number().int()),
  notMeasured: z.string().nullable(),
});

const runViewSchema = z.object({
  run: runRecordSchema,
  live: z.boolean(),
  episodes: countsSchema,
  failedText: z.string().nullable(),
  envs: z.array(measurementSchema.extend({ envHash: z.string(), envName: z.string().nullable(), episodes: z.array(runEpisodeSchema) })),
});
export type RunView = z.infer<typeof runViewSchema>;

const sideSchema = measurementSchema.pick({ regret: true, rHint: true, rNoHint: true, winRate: true, failed: true, notMeasured: true }).nullable();
const compareRowSchema = z.object({ envHash: z.string(), envName: z.string().nullable(), a: sideSchema, b: sideSchema, regretDelta: z.number().nullable(), winRateDelta: z.number().nullable() });
export type CompareRow = z.infer<typeof compareRowSchema>;

export const measuredSchema = z.object({
  runId: z.string(),
  envHash: z.string(),
  envName: z.string().nullable(),
  model: z.string(),
  rHint: z.number().nullable(),
  rNoHint: z.number().nullable(),
  regret: z.number().nullable(),
  winRate: z.number().nullable(),
  difficulty: z.number().nullable(),
  frontier: z.boolean(),
  hintFailed: z.boolean(),
  okHint: z.number().int(),
  okNoHint: z.number().int(),
  failed: z.number().int(),
  seeds: z.array(z.number().int()),
  seedStart: z.number().int().nullable(),
  runStatus: statusSchema.nullable(),
  updatedAt: z.string(),
});
export type Measured = z.infer<typeof measuredSchema>;

export const runsCalls = {
  'runs.list': defineCall({
    name: 'runs.list',
    summary: 'Model runs, newest first, filtered by model, environment version, selection, status or start date.',
    input: z
      .object({
        model: z.string().max(300).optional(),
        envHash: hashSchema.optional(),
        selection: z.string().max(2000).optional(),
        status: statusSchema.optional(),
        from: z.string().max(40).optional(),
        to: z.string().max(40).optional(),
        limit: z.number().int().min(1).max(1000).default(100),
        offset: z.number().int().min(0).default(0),
      })
      .strict(),
    output: z.object({ total: z.number().int(), models: z.array(z.string()), rows: z.array(runRecordSchema.extend({ live: z.boolean(), episodes: countsSchema, failedText: z.string().nullable() })) }),
  }),
  'runs.get': defineCall({
    name: 'runs.get',
    summary: 'One run in full: its record, what it measured per environment (with the seeds and why a number is missing) and every episode.',
    input: z.object({ id: runIdSchema }).strict(),
    output: runViewSchema,
  }),
  'runs.compare': defineCall({
    name: 'runs.compare',
    summary: 'Two runs per environment: regret and win rate of each, B - A, and the environments where they disagree most.',
    input: z.object({ a: runIdSchema, b: runIdSchema }).strict(),
    output: z.object({ a: runViewSchema, b: runViewSchema, rows: z.array(compareRowSchema), disagree: z.array(compareRowSchema), shared: z.number().int() }),
  }),
  'runs.measured': defineCall({
    name: 'runs.measured',
    summary: 'Every measurement of the given environment versions (each model, each run), newest first.',
    input: z.object({ hashes: z.array(hashSchema).min(1).max(1000) }).strict(),
    output: z.array(measuredSchema),
  }),
  'runs.resume': defineCall({
    name: 'runs.resume',
    summary: 'Plays what a cancelled or interrupted run has not played (and its failed episodes again), with its own settings; answers like models.play.',
    input: z.object({ id: runIdSchema }).strict(),
    output: runOutput,
  }),
  'runs.delete': defineCall({
    name: 'runs.delete',
    summary: 'Forgets a run record (its recorded episodes stay in Episodes).',
    input: z.object({ id: runIdSchema }).strict(),
    output: z.object({ deleted: z.boolean() }),
  }),
} as const;

export const runsEvents = {
  'runs.changed': defineEvent({ name: 'runs.changed', summary: 'A run record changed (started, an episode recorded, finished, deleted).', payload: z.object({ runId: z.string() }) }),
} as const;
