import { z } from 'zod';
import { boundedHint } from '../limits';
import { hashSchema, runtimeKindSchema } from '../schemas';
import { defineCall } from '../contract';
import { episodeSummarySchema, openRequestId, stepViewSchema } from './episodes';

/**
 * Model policies: play environments with a served model (any OpenAI-compatible chat-completions
 * server) by SPADE's agent protocol, with and without the hint, and measure its regret. Progress,
 * cancel and resume go through the episodes regret run calls and events (runId).
 */

const hash = hashSchema;
const seed = z.number().int().min(0).max(2 ** 31 - 1);
const runId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ or -, at most 64');

export const endpointSchema = z
  .object({
    /** An OpenAI-compatible server's URL, or `local`: the embedded GGUF model that `model` names (core/models/localEngine.ts). */
    baseUrl: z.union([z.literal('local'), z.string().url('The endpoint is an http(s) URL, or local for the embedded model').regex(/^https?:\/\//, 'The endpoint is an http(s) URL, or local for the embedded model')]),
    model: z.string().min(1).max(300),
    /** Name of a secret held by the session's secret store (jobs.setSecret): sealed on the desktop, in memory on the web. */
    apiKeySecret: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).max(100).nullable().default(null),
    temperature: z.number().min(0).max(5).default(1),
    topP: z.number().gt(0).max(1).default(0.95),
    /** Sent only when set (OpenAI refuses top_k; SGLang and vLLM take it). */
    topK: z.number().int().min(-1).nullable().default(20),
    maxTokens: z.number().int().min(1).max(1_000_000).default(8192),
    /** SPADE's actor thinking mode (chat_template_kwargs.enable_thinking; `</think>` cut before extraction). */
    thinking: z.boolean().nullable().default(null),
    turnTimeoutSec: z.number().min(1).max(3600).default(300),
    retries: z.number().int().min(0).max(20).default(4),
    concurrency: z.number().int().min(1).max(1024).default(8),
    stream: z.boolean().default(false),
    /**
     * Through a job's SSH connection (a job run over SSH or Slurm): baseUrl is then the server as
     * the job's SSH host sees it, e.g. http://gpu-node-7:30000/v1 on a cluster node. Null: directly.
     */
    via: z
      .object({ jobId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a job id') })
      .strict()
      .nullable()
      .default(null),
  })
  .strict();
export type EndpointInput = z.input<typeof endpointSchema>;
export type Endpoint = z.output<typeof endpointSchema>;

const turnSchema = z.object({
  turn: z.number().int(),
  raw: z.string(),
  reasoning: z.string().nullable(),
  kind: z.enum(['step', 'tool', 'none']),
  action: z.string().nullable(),
  calls: z.array(z.object({ name: z.string(), arguments: z.unknown(), output: z.string().optional(), returncode: z.number().optional() })),
  stepIdx: z.number().int().nullable(),
  finishReason: z.string().nullable(),
  usage: z.object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional(), total_tokens: z.number().optional() }).nullable(),
  latencyMs: z.number(),
  attempts: z.number().int(),
  error: z.string().nullable(),
});
export type ModelTurn = z.infer<typeof turnSchema>;

const episodeSchema = z.object({
  episodeId: z.number().int(),
  hash: z.string(),
  seed: z.number().int(),
  hint: z.boolean(),
  /** SPADE's return; null when the episode failed (it has none, and counts in no mean). */
  return: z.number().nullable(),
  failed: z.boolean(),
  error: z.string().nullable(),
  /** 'refused': SPADE's load refused the game (error says why, in SPADE's words); nothing was played. */
  endedBy: z.enum(['env', 'budget', 'length', 'error', 'refused']),
  turns: z.array(turnSchema),
});

const envResultSchema = z.object({
  hash: z.string(),
  name: z.string().nullable(),
  skill: z.string().nullable(),
  /** Measured by this run; null when not measured (too few episodes succeeded, or the arm was not played). */
  rHint: z.number().nullable(),
  rNoHint: z.number().nullable(),
  regret: z.number().nullable(),
  /** Share of the unhinted episodes won (return > 0). */
  winRate: z.number().nullable(),
  /** SPADE's fixed-model difficulty, 1 - |p - 0.5| / 0.5. */
  difficulty: z.number().nullable(),
  hintFailed: z.boolean(),
  /** What a training run recorded for this game (imported), kept apart from what was measured. */
  recordedRegret: z.number().nullable(),
  recordedWinRate: z.number().nullable(),
  failed: z.number().int(),
  /** Why the numbers are missing, e.g. "3 of 8 episodes failed; ...". */
  notMeasured: z.string().nullable(),
  /** The seeds the numbers came from. */
  seeds: z.array(z.number().int()),
  hintReturns: z.array(z.number()),
  noHintReturns: z.array(z.number()),
});

/** Which regret: SPADE's estimator (the default) or the workbench's paired seeds (core/episodes/estimator.ts). */
export const estimatorSchema = z.enum(['spade', 'paired']);

/** SPADE's estimator's counts, hash seed and per-arm thinking (its 8B recipe: only the unhinted arm thinks). */
export const spadeEstimatorSchema = z
  .object({
    hintPlays: z.number().int().min(1).max(1000).optional(),
    noHintPlays: z.number().int().min(1).max(1000).optional(),
    hashSeed: z.number().int().min(0).max(4294967295).optional(),
    thinking: z.object({ hint: z.boolean(), nohint: z.boolean() }).nullable().optional(),
  })
  .strict();

export const runOutput = z.object({
  runId: z.string(),
  model: z.string(),
  /** Which estimator made every regret of this run. */
  estimator: estimatorSchema,
  status: z.enum(['running', 'done', 'cancelled', 'failed']),
  cancelled: z.boolean(),
  /** "n of m episodes failed", or null. */
  failedText: z.string().nullable(),
  envs: z.array(envResultSchema),
  episodes: z.array(episodeSchema),
  /** Mean regret per skill over the environments measured (null: none was). */
  bySkill: z.array(z.object({ skill: z.string(), envs: z.number().int(), meanRegret: z.number().nullable(), meanRHint: z.number().nullable(), meanRNoHint: z.number().nullable() })),
});
export type ModelRun = z.infer<typeof runOutput>;

export const modelsCalls = {
  'models.ping': defineCall({
    name: 'models.ping',
    summary: 'One short chat completion against an endpoint: whether it answers, how fast, and what it says.',
    input: z.object({ endpoint: endpointSchema }).strict(),
    output: z.object({ ok: z.boolean(), latencyMs: z.number(), text: z.string(), error: z.string().nullable() }),
  }),
  'models.turn': defineCall({
    name: 'models.turn',
    summary: "One model turn in a live episode (episodes.open): SPADE's messages continue from the recorded transcript; the action or tool calls play in the session.",
    /** With a requestId, episodes.cancel stops the turn: the model's request is dropped and nothing is recorded. */
    input: z.object({ id: z.number().int().positive(), endpoint: endpointSchema, requestId: openRequestId.optional() }).strict(),
    output: z.object({
      episode: episodeSummarySchema,
      steps: z.array(stepViewSchema),
      forkedFrom: z.number().int().nullable(),
      /** Why no turn was played (the episode is over, the budget is used, the model failed), else null. */
      ended: z.string().nullable(),
    }),
  }),
  'models.play': defineCall({
    name: 'models.play',
    summary: "Play environments with a served model by SPADE's agent protocol, N seeds with and/or without the hint; SPADE's return and regret per environment. Cancel with episodes.regretCancel; the same runId resumes.",
    input: z
      .object({
        hashes: z.array(hash).min(1).max(10_000),
        endpoint: endpointSchema,
        seeds: z.number().int().min(1).max(10_000).default(1),
        seedStart: seed.default(0),
        arms: z.array(z.enum(['hint', 'nohint'])).min(1).max(2).default(['hint', 'nohint']),
        /** Overrides the stored hint (one environment only). */
        hintText: boundedHint(z.string()).optional(),
        maxTurns: z.number().int().min(1).max(10_000).optional(),
        runtime: runtimeKindSchema.optional(),
        runId: runId.optional(),
        /** What the environments were chosen by (a library query), kept with the run for filtering. */
        selection: z.string().max(2000).optional(),
        /** SPADE's estimator unless `paired` (then `seeds` and `seedStart` choose the seeds of both arms). */
        estimator: estimatorSchema.default('spade'),
        spade: spadeEstimatorSchema.optional(),
      })
      .strict(),
    output: runOutput,
  }),
} as const;
