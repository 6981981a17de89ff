import { z } from 'zod';
import { hashSchema } from '../schemas';
import { defineCall, defineEvent } from '../contract';
import { estimatorSchema, runOutput, spadeEstimatorSchema } from './models';
import { sweepSchema, sweepTargetSchema } from './audit';

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
  config: z.object({ endpoint: z.record(z.string(), z.unknown()), sampling: z.record(z.string(), z.unknown()), hintText: z.string().nullable().optional(), spade: z.record(z.string(), z.unknown()).optional() }),
  hintSource: z.string(),
  seeds: z.number().int(),
  seedStart: z.number().int(),
  arms: z.array(z.enum(['hint', 'nohint'])),
  maxTurns: z.number().int(),
  runtime: z.string(),
  selection: z.string().nullable(),
  hashes: z.array(z.string()),
  /** Which estimator made the run's regrets (runs stored before estimators had names: paired). */
  estimator: estimatorSchema,
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
  /** The reset's seed; with `unseeded`, the play's place among the unseeded plays (SPADE resets its unhinted plays with no seed). */
  seed: z.number().int(),
  unseeded: z.boolean().optional(),
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

const sideSchema = measurementSchema.pick({ regret: true, rHint: true, rNoHint: true, winRate: true, failed: true, notMeasured: true, hintFailed: true }).nullable();
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
  estimator: estimatorSchema,
});
export type Measured = z.infer<typeof measuredSchema>;

/**
 * A regret sweep's policy: SPADE's scripted baselines (solution(), seeded random guesses) or a
 * served model (an OpenAI-compatible server the nodes reach; the CLI's --endpoint/--model).
 */
export const sweepPolicySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('solution') }).strict(),
  z.object({ kind: z.literal('random'), seed: z.number().int().min(-(2 ** 31)).max(2 ** 31 - 1).optional() }).strict(),
  z
    .object({
      kind: z.literal('model'),
      baseUrl: z.string().max(2000).regex(/^https?:\/\/\S+$/, 'an http(s) URL reachable from where the episodes play'),
      model: z.string().min(1).max(300),
      temperature: z.number().min(0).max(5).optional(),
      topP: z.number().gt(0).max(1).optional(),
      topK: z.number().int().min(-1).max(1_000_000).nullable().optional(),
      maxTokens: z.number().int().min(1).max(10_000_000).optional(),
      thinking: z.boolean().nullable().optional(),
      /**
       * The name of the session's secret that holds the server's API key (jobs.setSecret), never the
       * key: sent as `Authorization: Bearer` here; a Ray or Slurm node reads it from its own
       * environment variable of that name (the CLI's --api-key-env).
       */
      apiKeySecret: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a secret name: letters, digits and _, not starting with a digit').max(100).nullable().optional(),
      /** Seconds a model turn may take (the CLI's --timeout; SPADE's 300 when absent). */
      turnTimeoutSec: z.number().min(1).max(3600).optional(),
      /** Retries of a failed model request (the CLI's --retries; 4 when absent). */
      retries: z.number().int().min(0).max(20).optional(),
    })
    .strict(),
]);
export type SweepPolicyInput = z.input<typeof sweepPolicySchema>;

/** A regret sweep as the app lists it: the pool sweep's row, counted in episodes, with its run and policy. */
export const regretSweepSchema = sweepSchema.omit({ envsPerSec: true }).extend({
  /** The model-run record its episodes are kept in (the Runs page lists it). */
  runId: z.string(),
  /** What played: solution(), random guesses (seed), or the model and its endpoint. */
  policy: z.string(),
  seeds: z.number().int(),
  seedStart: z.number().int(),
  budget: z.number().int(),
  /** Which regret the sweep measures (a sweep stored before estimators had names: paired). */
  estimator: estimatorSchema,
  /** Environment versions in the pool (each plays every seed, with and without its hint). */
  envs: z.number().int(),
  episodesPerSec: z.number().nullable(),
  /** Seconds left at the rate of this run of it; null until there is a rate. */
  etaSec: z.number().nullable(),
  /** A served model's settings as the sweep keeps them (a resume plays with the same); null for a scripted policy. */
  modelSettings: z
    .object({
      temperature: z.number(),
      topP: z.number(),
      topK: z.number().nullable(),
      maxTokens: z.number().int(),
      thinking: z.boolean().nullable(),
      turnTimeoutSec: z.number(),
      retries: z.number().int(),
      /** The secret's name (the key itself is never kept with a sweep). */
      apiKeySecret: z.string().nullable(),
    })
    .nullable(),
});
export type RegretSweepView = z.infer<typeof regretSweepSchema>;

/** One environment of a regret sweep's report, as `regret --json` prints it (SPADE's summarize over the seeds both arms finished). */
const regretEnvSchema = z.object({
  env: z.string(),
  hash: z.string(),
  /** Null where the arm has no return: no hint (hint_failed), or every episode of the arm failed. */
  r_hint: z.number().nullable(),
  r_no_hint: z.number().nullable(),
  /** "Not measured" (null) unless both arms returned: a game without a hint has no regret, never 0. */
  regret: z.number().nullable(),
  hint_failed: z.boolean(),
  returns_hint: z.array(z.number()),
  returns_no_hint: z.array(z.number()),
  /** Share of each arm's episodes won (return > 0), over the same paired seeds; null for an arm that played none. */
  win_rate_hint: z.number().nullable(),
  win_rate_no_hint: z.number().nullable(),
  /** The run record's measurement (null where too few seeds played). */
  win_rate: z.number().nullable(),
  failed: z.number().int(),
  not_measured: z.string().nullable(),
});

export const regretReportSchema = z.object({
  sweep: z.string(),
  run_id: z.string(),
  on: z.string(),
  policy: z.string(),
  model: z.string().nullable(),
  budget: z.number().int(),
  /** Which estimator made every regret of the report (core/episodes/estimator.ts). */
  estimator: estimatorSchema,
  status: statusSchema,
  failed: z.string().nullable(),
  /**
   * Means over the `measured` environments (regret measured: both arms returned), all three over the
   * same ones so that avg_regret = avg_r_hint - avg_r_no_hint; `no_hint` of the `envs` had no hint.
   */
  summary: z.object({ envs: z.number().int(), measured: z.number().int(), no_hint: z.number().int(), avg_regret: z.number().nullable(), avg_r_hint: z.number().nullable(), avg_r_no_hint: z.number().nullable() }),
  envs: z.array(regretEnvSchema),
});
export type RegretReport = z.infer<typeof regretReportSchema>;

const sweepIdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a sweep id');

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
  'runs.sweepStart': defineCall({
    name: 'runs.sweepStart',
    summary: "SPADE's hint-based regret over the library's environments that match a query, as `regret --pool` runs it: every seed with and without the hint, here, on a saved job host's Slurm or on a Ray cluster, kept as a model run; progress comes as runs.sweepProgress. The same pool, policy, seeds and target as an unfinished sweep resumes that one.",
    input: z
      .object({
        query: z.string().max(2000),
        /** Seeds of each arm for the paired estimator (SPADE's has its own counts: `spade`). */
        seeds: z.number().int().min(1).max(100_000).default(1),
        seedStart: z.number().int().min(0).max(2 ** 31 - 1).default(0),
        maxTurns: z.number().int().min(1).max(10_000).optional(),
        policy: sweepPolicySchema,
        target: sweepTargetSchema.optional(),
        /** SPADE's estimator (the default) or paired seeds. */
        estimator: estimatorSchema.default('spade'),
        spade: spadeEstimatorSchema.optional(),
      })
      .strict(),
    output: regretSweepSchema,
  }),
  'runs.sweeps': defineCall({
    name: 'runs.sweeps',
    summary: 'Recent regret sweeps, newest first, with their progress; a sweep left running by a workbench that stopped is "interrupted".',
    input: z.object({ limit: z.number().int().min(1).max(200).optional() }).strict(),
    output: z.array(regretSweepSchema),
  }),
  'runs.sweepResume': defineCall({
    name: 'runs.sweepResume',
    summary: 'Finish an interrupted, cancelled or failed regret sweep on the target it was started on (`regret --resume`): what arrived stays, nothing is played or counted twice.',
    input: z.object({ sweepId: sweepIdSchema }).strict(),
    output: regretSweepSchema,
  }),
  'runs.sweepCancel': defineCall({
    name: 'runs.sweepCancel',
    summary: "Cancel a regret sweep (`regret --cancel`): stops its episodes here, or its Ray job or Slurm array; what arrived stays.",
    input: z.object({ sweepId: sweepIdSchema }).strict(),
    output: z.object({ cancelled: z.boolean(), stopped: z.array(z.string()) }),
  }),
  'runs.sweepReport': defineCall({
    name: 'runs.sweepReport',
    summary: "A regret sweep's report as `regret --json` prints it (without the episode list): per environment SPADE's r_hint, r_no_hint, regret and the win rates, over the episodes that arrived.",
    input: z.object({ sweepId: sweepIdSchema }).strict(),
    output: regretReportSchema,
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
  'runs.sweepProgress': defineEvent({
    name: 'runs.sweepProgress',
    summary: 'A regret sweep advanced, was submitted, finished, failed or was cancelled (the whole row, as runs.sweeps lists it).',
    payload: regretSweepSchema,
  }),
} as const;
