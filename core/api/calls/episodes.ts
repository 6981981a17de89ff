import { z } from 'zod';
import { boundedHint } from '../limits';
import { hashSchema, idSchema, runtimeKindSchema } from '../schemas';
import { defineCall, defineEvent } from '../contract';
import { spadeStepSchema } from '../spadeStep';
import { MAX_ACTION_INPUT_CHARS } from '../spadeRules';

/**
 * Episodes: play an environment version step by step, record everything needed to replay it,
 * scrub a timeline, compare with/without SPADE's hint, import training trajectories and find
 * where they diverge from a re-execution.
 */

const id = idSchema;
const hash = hashSchema;
const seed = z.number().int().min(0).max(2 ** 31 - 1);
const runtime = runtimeKindSchema;
const action = z.string().max(MAX_ACTION_INPUT_CHARS);
export const playModeSchema = z.enum(['spade', 'fresh', 'deterministic']);

export const harnessErrorViewSchema = z.object({
  kind: z.string(),
  type: z.string(),
  message: z.string(),
  traceback: z.string().optional(),
  line: z.number().int().optional(),
});

export { spadeStepSchema };

export const stepViewSchema = z.object({
  idx: z.number().int().min(0),
  kind: z.enum(['reset', 'step']),
  action: z.string().nullable(),
  /** What the agent wrote, when the action was extracted from it (imports, scripts). */
  rawAction: z.string().nullable(),
  seed: z.number().int().nullable(),
  observation: z.string().nullable(),
  /** What the agent saw: for a hinted reset, SPADE's `"{observation}\n\nHINT: {hint}"`. */
  agentObservation: z.string().nullable(),
  reward: z.number().nullable(),
  terminated: z.boolean(),
  truncated: z.boolean(),
  info: z.record(z.string(), z.unknown()),
  error: harnessErrorViewSchema.nullable(),
  /** Python type names of what the game returned (obs, reward, terminated, truncated, info). */
  types: z.array(z.string()).nullable(),
  /** Sum of rewards up to and including this step. */
  cumReturn: z.number(),
  /** SPADE's wrapper conversion of the step (what the agent and SPADE's return saw); null for resets. */
  spade: spadeStepSchema.nullable().optional(),
});
export type StepView = z.infer<typeof stepViewSchema>;

export const stateChangeSchema = z.object({
  path: z.string(),
  kind: z.enum(['added', 'removed', 'changed']),
  before: z.string().optional(),
  after: z.string().optional(),
});
export type StateChangeView = z.infer<typeof stateChangeSchema>;

export const lineOpSchema = z.object({ op: z.enum(['=', '+', '-']), text: z.string() });

export const stepDetailSchema = z.object({
  step: stepViewSchema,
  /** The harness's state tree after this step ({className, fields}); null if it could not be read. */
  state: z.unknown().nullable(),
  /** Fields that differ from the previous step's state. */
  changes: z.array(stateChangeSchema),
  /** For a reset: fields that differ from an earlier reset with the same seed (a leak shows here); null when there is none to compare with. */
  changesFromSameSeedReset: z.array(stateChangeSchema).nullable(),
  /** The reset it was compared with: this episode's, or the fresh reference the episode was opened against. */
  comparedReset: z.object({ episodeId: z.number().int(), idx: z.number().int(), seed: z.number().int().nullable(), sameEpisode: z.boolean() }).nullable(),
  observationDiff: z.array(lineOpSchema),
});
export type StepDetail = z.infer<typeof stepDetailSchema>;

export const policySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('script'), actions: z.array(action).max(100_000), extract: z.boolean().default(true) }).strict(),
  z.object({ kind: z.literal('solution') }).strict(),
  z.object({ kind: z.literal('random'), seed: z.number().int().optional(), lo: z.number().int().default(1), hi: z.number().int().default(100) }).strict(),
]);
export type Policy = z.infer<typeof policySchema>;

export const untilSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('done') }).strict(),
  z.object({ kind: z.literal('reward') }).strict(),
  z.object({ kind: z.literal('expr'), expr: z.string().min(1).max(500) }).strict(),
  z.object({ kind: z.literal('steps'), count: z.number().int().min(1).max(100_000) }).strict(),
]);

export const episodeSummarySchema = z.object({
  id: z.number().int(),
  envHash: z.string(),
  envName: z.string().nullable(),
  className: z.string().nullable(),
  seed: z.number().int().nullable(),
  hintEnabled: z.boolean(),
  hintText: z.string().nullable(),
  maxTurns: z.number().int(),
  runtime: z.string(),
  policy: z.record(z.string(), z.unknown()),
  origin: z.enum(['played', 'imported', 'replay', 'regret']),
  label: z.string(),
  parentId: z.number().int().nullable(),
  stepCount: z.number().int(),
  totalReturn: z.number(),
  terminated: z.boolean(),
  truncated: z.boolean(),
  divergenceStep: z.number().int().nullable(),
  meta: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** A runtime session is open for it in this app (it can be stepped and scrubbed). */
  live: z.boolean(),
  /** Where the live session stands (after a scrub it can be behind the last recorded step). */
  cursor: z.number().int().nullable(),
});
export type EpisodeSummary = z.infer<typeof episodeSummarySchema>;

const episodeWithSteps = z.object({ episode: episodeSummarySchema, steps: z.array(stepViewSchema) });
/** One interactive step: only what it added, so a step costs the same at step 5 and at step 5,000. */
const stepResult = z.object({
  episode: episodeSummarySchema,
  /** The steps this call recorded (after a fork, the episode is a new one: read it whole). */
  steps: z.array(stepViewSchema),
  detail: stepDetailSchema,
  forkedFrom: z.number().int().nullable(),
});

export const divergenceSchema = z.object({
  idx: z.number().int(),
  fields: z.array(z.enum(['observation', 'reward', 'terminated', 'truncated', 'error', 'missing'])),
  recorded: stepViewSchema,
  replayed: stepViewSchema.nullable(),
  /** State at the divergent step: recorded vs replayed when both exist, else replayed vs its previous step. */
  stateChanges: z.array(stateChangeSchema),
  observationDiff: z.array(lineOpSchema),
});
export type Divergence = z.infer<typeof divergenceSchema>;

export const replayReportSchema = z.object({
  episodeId: z.number().int(),
  replayId: z.number().int(),
  compared: z.number().int(),
  divergence: divergenceSchema.nullable(),
});
export type ReplayReport = z.infer<typeof replayReportSchema>;

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a date as YYYY-MM-DD');
export const episodeOutcomes = ['won', 'lost', 'truncated', 'unfinished'] as const;

/** Filters of the recorded list: every one narrows it, all together. */
const episodeFilterShape = {
  /** The environment's name (every version of it). */
  envName: z.string().min(1).max(500).optional(),
  /** The policy's kind: interactive, script, solution, random, llm, trajectory, replay. */
  policy: z.string().min(1).max(64).optional(),
  hint: z.boolean().optional(),
  /** SPADE's outcome: won (terminated, return > 0), lost (terminated, return <= 0), truncated, unfinished. */
  outcome: z.enum(episodeOutcomes).optional(),
  /** Recorded on or after this day (UTC). */
  since: day.optional(),
  /** Recorded on or before this day (UTC). */
  until: day.optional(),
};

export const openRequestId = z.string().regex(/^[\w.:-]{1,100}$/, { message: 'A request id is 1 to 100 letters, digits, dots, colons or dashes' });
const regretRunId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ or -, at most 64');

const armSchema = z.object({
  hint: z.boolean(),
  returns: z.array(z.number()),
  mean: z.number(),
  solveRate: z.number(),
  episodeIds: z.array(z.number().int()),
});

export const episodesCalls = {
  'episodes.list': defineCall({
    name: 'episodes.list',
    summary: 'Recorded episodes, newest first, optionally for one environment version.',
    input: z
      .object({
        envHash: hash.optional(),
        origin: z.enum(['played', 'imported', 'replay', 'regret']).optional(),
        ...episodeFilterShape,
        limit: z.number().int().min(1).max(1000).default(200),
        offset: z.number().int().min(0).default(0),
      })
      .strict(),
    output: z.object({
      total: z.number().int(),
      rows: z.array(episodeSummarySchema),
      /** What the filters can choose from, over every recorded episode (with counts). */
      facets: z.object({ envNames: z.array(z.object({ value: z.string(), count: z.number().int() })), policies: z.array(z.object({ value: z.string(), count: z.number().int() })) }),
    }),
  }),
  'episodes.get': defineCall({
    name: 'episodes.get',
    summary: 'One episode with its timeline (steps without state trees).',
    input: z.object({ id }).strict(),
    output: episodeWithSteps,
  }),
  'episodes.inspect': defineCall({
    name: 'episodes.inspect',
    summary: 'One recorded step in full: state tree, changed fields, observation diff.',
    input: z.object({ id, idx: z.number().int().min(0) }).strict(),
    output: stepDetailSchema,
  }),
  'episodes.open': defineCall({
    name: 'episodes.open',
    summary: 'Load an environment version in a fresh runtime session, reset it with a seed and start recording.',
    input: z
      .object({
        hash,
        seed: seed.nullable().default(0),
        hint: z.boolean().default(false),
        /** Overrides the environment's stored hint. */
        hintText: boundedHint(z.string()).optional(),
        maxTurns: z.number().int().min(1).max(10_000).optional(),
        runtime: runtime.optional(),
        label: z.string().max(200).default(''),
        /** A reset (of another episode) that this one's resets with the same seed are compared with: a fresh instance's, for leaks. */
        resetReference: z.object({ episodeId: id, idx: z.number().int().min(0) }).strict().optional(),
        /** How the instance is made and seeded: SPADE's load (default), a fresh instance as the audit makes, or the workbench's deterministic mode. */
        mode: playModeSchema.optional(),
        /** Chosen by the caller: episodes.openCancel with it stops this open while it waits. */
        requestId: openRequestId.optional(),
      })
      .strict(),
    output: episodeWithSteps,
  }),
  'episodes.openRemote': defineCall({
    name: 'episodes.openRemote',
    summary:
      "Open an environment another OpenEnv server serves (its base URL) as a recorded episode (runtime 'openenv'): a /ws session, reset with the seed, and the hint where the server has one (the workbench's serve-env). It is then stepped, reset, scrubbed and replayed through the other episodes.* calls.",
    input: z
      .object({
        url: z.string().min(1).max(2000),
        seed: seed.nullable().default(0),
        hint: z.boolean().default(false),
        /** On a serve-env that serves several games, the one to play (an env_hash of its GET /tasks); default its first. */
        env: hash.optional(),
        maxTurns: z.number().int().min(1).max(10_000).optional(),
        label: z.string().max(200).optional(),
        /** episodes.openCancel with it stops this open while it waits. */
        requestId: openRequestId.optional(),
      })
      .strict(),
    output: episodeWithSteps,
  }),
  'episodes.openCancel': defineCall({
    name: 'episodes.openCancel',
    summary: 'Stop an episodes.open that is still waiting (interpreter start, load, first reset): nothing is recorded, no session stays open, and the open fails with cancelled.',
    input: z.object({ requestId: openRequestId }).strict(),
    output: z.object({ cancelled: z.boolean() }),
  }),
  'episodes.cancel': defineCall({
    name: 'episodes.cancel',
    summary:
      'Stop an episodes.act, resetAgain, run, scrub, replay, importTrajectory or a models.turn started with a requestId (reopening a recording included): its interpreter is stopped, the episode\'s live session is dropped, nothing more is recorded (steps recorded before stay), and the call fails with cancelled.',
    input: z.object({ requestId: openRequestId }).strict(),
    output: z.object({ cancelled: z.boolean() }),
  }),
  'episodes.act': defineCall({
    name: 'episodes.act',
    summary: 'One step with an action. After a scrub to an earlier step the play continues in a new (forked) episode.',
    input: z.object({ id, action, extract: z.boolean().default(false), requestId: openRequestId.optional() }).strict(),
    output: stepResult,
  }),
  'episodes.resetAgain': defineCall({
    name: 'episodes.resetAgain',
    summary: 'Reset the same environment instance again (a fresh load would hide state leaking across reset).',
    input: z.object({ id, seed: seed.nullable().optional(), requestId: openRequestId.optional() }).strict(),
    output: stepResult,
  }),
  'episodes.run': defineCall({
    name: 'episodes.run',
    summary: 'Step with a policy until a condition holds (done, reward > 0, a state expression, or a step count).',
    input: z
      .object({ id, policy: policySchema, until: untilSchema.default({ kind: 'done' }), maxSteps: z.number().int().min(1).max(100_000).default(1000), requestId: openRequestId.optional() })
      .strict(),
    output: episodeWithSteps.extend({ forkedFrom: z.number().int().nullable(), stoppedBecause: z.string() }),
  }),
  'episodes.scrub': defineCall({
    name: 'episodes.scrub',
    summary: 'Move the live session to any recorded step (nearest snapshot, then re-execution) and return that step.',
    input: z.object({ id, idx: z.number().int().min(0), requestId: openRequestId.optional() }).strict(),
    output: z.object({ detail: stepDetailSchema, live: z.boolean(), reexecuted: z.number().int() }),
  }),
  'episodes.close': defineCall({
    name: 'episodes.close',
    summary: 'Close the runtime session of an episode (the recording stays).',
    input: z.object({ id }).strict(),
    output: z.object({ closed: z.boolean() }),
  }),
  'episodes.delete': defineCall({
    name: 'episodes.delete',
    summary: 'Delete recorded episodes.',
    input: z.object({ ids: z.array(id).min(1).max(10_000) }).strict(),
    output: z.object({ deleted: z.number().int() }),
  }),
  'episodes.replay': defineCall({
    name: 'episodes.replay',
    summary: 'Re-execute a recorded episode in a fresh session and report the first divergence.',
    input: z.object({ id, runtime: runtime.optional(), requestId: openRequestId.optional() }).strict(),
    output: replayReportSchema,
  }),
  'episodes.importTrajectory': defineCall({
    name: 'episodes.importTrajectory',
    summary: 'Import OpenAI-style messages (JSON or JSONL), bind them to an environment, find the seed if needed, replay and report the first divergence.',
    input: z
      .object({
        text: z.string().min(1).max(50_000_000),
        fileName: z.string().max(1000).optional(),
        envHash: hash.optional(),
        seed: seed.optional(),
        seedSearchLimit: z.number().int().min(1).max(100_000).default(1000),
        thinking: z.boolean().optional(),
        runtime: runtime.optional(),
        /** Chosen by the caller: episodes.cancel with it stops the seed search and the replay, and undoes the import. */
        requestId: openRequestId.optional(),
      })
      .strict(),
    output: z.object({
      results: z.array(
        z.object({
          episodeId: z.number().int(),
          envHash: z.string(),
          envName: z.string().nullable(),
          boundBy: z.enum(['hash', 'file', 'given']),
          seed: z.number().int().nullable(),
          seedFrom: z.enum(['recorded', 'given', 'search', 'none']),
          seedsTried: z.number().int(),
          report: replayReportSchema,
        }),
      ),
    }),
  }),
  'episodes.exportJsonl': defineCall({
    name: 'episodes.exportJsonl',
    summary: 'Episodes as JSONL, one self-sufficient record per line (including the environment source).',
    input: z.object({ ids: z.array(id).min(1).max(10_000) }).strict(),
    output: z.object({ text: z.string(), count: z.number().int() }),
  }),
  'episodes.importJsonl': defineCall({
    name: 'episodes.importJsonl',
    summary: 'Import episodes exported as JSONL; sources not yet in the library are added to it.',
    input: z.object({ text: z.string().min(1).max(200_000_000) }).strict(),
    output: z.object({ ids: z.array(z.number().int()), skipped: z.array(z.object({ line: z.number().int(), reason: z.string() })) }),
  }),
  'episodes.regret': defineCall({
    name: 'episodes.regret',
    summary: "N seeds per arm with a policy, with and without the hint: mean returns, regret and solve rates.",
    input: z
      .object({
        hash,
        seeds: z.number().int().min(1).max(1000).default(20),
        seedStart: seed.default(0),
        policy: policySchema,
        /** The hinted arm's policy, when it differs (e.g. solution() as a perfect hint-follower). */
        hintPolicy: policySchema.optional(),
        hintText: boundedHint(z.string()).optional(),
        maxTurns: z.number().int().min(1).max(10_000).optional(),
        runtime: runtime.optional(),
        /** Chosen by the caller: progress comes as episodes.regretProgress with it, and it cancels the run. */
        runId: regretRunId.optional(),
      })
      .strict(),
    output: z.object({
      withHint: armSchema,
      withoutHint: armSchema,
      /** Null ("not measured") without a hinted arm (no hint) or when an arm never returned; never 0 for a missing arm. */
      regret: z.number().nullable(),
      hintText: z.string().nullable(),
      /** Stopped by episodes.regretCancel: the arms hold the seeds finished before the stop (the same seeds in both). */
      cancelled: z.boolean(),
    }),
  }),
  'episodes.regretCancel': defineCall({
    name: 'episodes.regretCancel',
    summary: 'Stop a running regret run after its current seed; the run returns what it finished.',
    input: z.object({ runId: regretRunId }).strict(),
    output: z.object({ cancelled: z.boolean() }),
  }),
} as const;

export const episodesEvents = {
  'episodes.regretProgress': defineEvent({
    name: 'episodes.regretProgress',
    summary: 'A regret run with a runId finished one more episode (seeds alternate between the arms).',
    payload: z.object({
      runId: regretRunId,
      /** Episodes finished, both arms counted; total is twice the seeds. */
      done: z.number().int(),
      total: z.number().int(),
      /** Seconds left at the current rate; null until there is a rate. */
      etaSec: z.number().nullable(),
    }),
  }),
  'episodes.changed': defineEvent({
    name: 'episodes.changed',
    summary: 'An episode was recorded, extended, imported or deleted.',
    payload: z.object({ ids: z.array(z.number().int()) }),
  }),
} as const;
