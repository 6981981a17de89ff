import { z } from 'zod';
import { defineCall, defineEvent } from '../contract';
import { COGNITIVE_SKILLS, TOOL_USE_SKILLS } from '../skills';
import { endpointSchema, estimatorSchema, spadeEstimatorSchema } from './models';
import { sweepTargetSchema } from './audit';
import { blendPartsSchema } from '../blendParts';
import { ACCEPTANCE_GATES, PRESET_IDS } from '../designPresets';

/**
 * Design rounds (issue 33): a designer model writes environments from memory seeds, each attempt is
 * checked (SPADE's load checks, its random-guess test, the workbench's audit), accepted games enter
 * the library with their parents and are played by an agent model as a run record. A round runs in
 * the background: design.progress says where it is, design.changed when its record changed.
 */

const roundId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ or -, at most 64');
const envId = z.number().int().min(1).max(2 ** 31);
const statusSchema = z.enum(['running', 'done', 'cancelled', 'failed']);
const stageSchema = z.enum(['designing', 'checking', 'hinting', 'playing']);

/** What decides the prompt: the same fields give the same prompt in a preview and in the round. */
const promptFields = {
  skills: z.array(z.enum([...COGNITIVE_SKILLS, ...TOOL_USE_SKILLS])).min(1, 'Choose at least one skill').max(15),
  difficulty: z.enum(['easy', 'medium', 'hard']).default('medium'),
  maxTurns: z.number().int().min(1).max(1000).default(12),
  /** The designer template's text; the workbench's own (resources/design/designer.txt) when absent. */
  template: z.string().min(1).max(200_000).optional(),
  /** A library search: seeds are drawn only from the environments it finds (all when absent). */
  seedsQuery: z.string().max(2000).optional(),
  pins: z.array(envId).max(50).default([]),
  bans: z.array(envId).max(1000).default([]),
  /** The draws' seed: attempt k of game g draws with seed + 1000 g + k - 1. */
  seed: z.number().int().min(0).max(2 ** 31 - 1).default(0),
  /** The researcher's extra words, last in the prompt ("make it harder"). */
  instruction: z.string().max(4000).optional(),
  /** Seeds use the numbers this model measured where it played a game (the agent's, usually); imported numbers elsewhere. */
  seedsModel: z.string().min(1).max(300).optional(),
  /** A variants round: this environment is the only seed (pinned, and memory is only it). */
  parentEnvId: envId.optional(),
  /**
   * A corpus file in SPADE's format (JSONL with "orig_doc" or "text"), sampled per attempt by SPADE's
   * CorpusLoader read from the SPADE checkout in Settings (needs one); the document is kept with the attempt.
   */
  corpus: z.string().min(1).max(4096).optional(),
  /** SPADE's --spade-corpus-max-doc-tokens, a word count: 6000 (games recipes) or 4000 (tool-use) when absent. */
  corpusMaxWords: z.number().int().min(1).max(1_000_000).optional(),
};

export const designPreviewInput = z.object(promptFields).strict();
export const designStartInput = z
  .object({
    ...promptFields,
    count: z.number().int().min(1).max(200).default(2),
    /** The preset (core/api/designPresets.ts): SPADE paper defaults by default; it gives the values not sent. */
    preset: z.enum(PRESET_IDS).default('spade-games'),
    /** `spade` (default): SPADE's trainer acceptance, the rest advice; `workbench`: reject on the advice too. The preset's when absent. */
    gate: z.enum(ACCEPTANCE_GATES).optional(),
    maxTurns: z.number().int().min(1).max(1000).optional(),
    attempts: z.number().int().min(1).max(20).optional(),
    feedback: z.enum(['repair', 'spade']).optional(),
    designer: endpointSchema,
    /** Plays accepted games (a run record each); null designs only. */
    agent: endpointSchema.nullable(),
    /** Episodes per arm when playing an accepted game (the paired estimator; SPADE's has its own counts). */
    playSeeds: z.number().int().min(1).max(100).default(2),
    /** Which regret play measures: SPADE's estimator (its counts, seeds and failure rule) or paired seeds. The preset's when absent. */
    estimator: estimatorSchema.optional(),
    /** SPADE's estimator's counts, hash seed and per-arm thinking (a preset sets them as its recipe does). */
    spadeEstimator: spadeEstimatorSchema.optional(),
    /** Where each attempt's checks run (as a pool audit's): this machine by default, a saved job host's Slurm, or a Ray head. */
    checksOn: sweepTargetSchema.optional(),
  })
  .strict();
export type DesignStartInput = z.input<typeof designStartInput>;

const seedSchema = z.object({ envId: z.number().int().nullable(), name: z.string(), skill: z.string().nullable(), winRate: z.number().nullable(), regret: z.number().nullable() });

const checkLine = z.object({ id: z.string(), status: z.string(), message: z.string() });
const acceptanceSchema = z.object({
  gate: z.enum(ACCEPTANCE_GATES),
  accepted: z.boolean(),
  /** Beside an accepted verdict: a step the recipe asks for did not run ("LLM validator not run"). */
  incomplete: z.string().nullable(),
  /** SPADE's reject stage where it has one (validate_game, criteria_throw_at_reset, env_validator) or the workbench's kind. */
  kind: z.string().nullable(),
  reason: z.string().nullable(),
  reasoning: z.string().nullable(),
  steps: z.array(z.object({ id: z.string(), status: z.enum(['pass', 'fail', 'off', 'not-run']), message: z.string() })),
  advice: z.array(checkLine),
});
export type DesignAcceptance = z.infer<typeof acceptanceSchema>;

const attemptSchema = z.object({
  n: z.number().int(),
  model: z.string(),
  prompt: z.string(),
  answer: z.string(),
  code: z.string(),
  verdicts: z.array(z.object({ id: z.string(), status: z.string(), message: z.string() }).passthrough()),
  rejected_because: z.string().nullable(),
  /** The acceptance verdict (core/design/acceptance.ts); null for attempts stored before it, or with no program. */
  acceptance: acceptanceSchema.nullable(),
  seeds: z.unknown(),
  /** The corpus document the prompt was grounded on (SPADE's CorpusLoader draw); null without a corpus. */
  document: z.object({ docId: z.number().int(), text: z.string(), truncated: z.boolean(), corpus: z.string(), maxWords: z.number().int() }).nullable(),
  /** What built the prompt's body: `spade:<file>:<function>` (read from a SPADE checkout) or `workbench:…` (ours). */
  builder: z.string().nullable(),
  /** The system message sent (SPADE's MULTITURN_GAME_GENERATION_SYSTEM_PROMPT for a cognitive game); null when none was. */
  system: z.string().nullable(),
  tokens: z.object({ prompt: z.number().nullable(), completion: z.number().nullable() }),
  ms: z.number(),
  error: z.string().nullable(),
});

const gameSchema = z.object({
  idx: z.number().int(),
  skill: z.string(),
  accepted: z.boolean(),
  env_id: z.number().int().nullable(),
  env_hash: z.string().nullable(),
  parents: z.array(z.number().int()),
  hint: z.string().nullable(),
  hint_error: z.string().nullable(),
  /** The workbench's hint-leak check of the hint written after acceptance (never part of SPADE's verdict). */
  hint_leak: z.object({ status: z.string(), message: z.string() }).nullable(),
  play_error: z.string().nullable(),
  /** Where the game's episodes were played (`local`, `ray://HOST:PORT`, `slurm:HOST`); null when not played. */
  plays_on: z.string().nullable(),
  regret: z.number().nullable(),
  /** Which estimator made `regret`: SPADE's, or paired seeds (a play stored before it was said: paired); null when not played. */
  regret_estimator: z.enum(['spade', 'paired']).nullable(),
  win_rate: z.number().nullable(),
  r_hint: z.number().nullable(),
  r_no_hint: z.number().nullable(),
  /** SPADE's designer reward from r_no_hint and regret (core/api/blendParts.ts); null: not accepted or not measured. */
  spade_blend: blendPartsSchema.nullable(),
  class: z.string().nullable(),
  difficulty_score: z.number().nullable(),
  /** The run record of this game's play (Runs page), when it was played. */
  run_id: z.string().nullable(),
  attempts: z.array(attemptSchema),
});
export type DesignGame = z.infer<typeof gameSchema>;

export const progressSchema = z.object({
  roundId: z.string(),
  game: z.number().int(),
  games: z.number().int(),
  skill: z.string(),
  stage: stageSchema,
  attempt: z.number().int(),
  of: z.number().int(),
  tokensPerSec: z.number().nullable(),
});
export type DesignProgress = z.infer<typeof progressSchema>;

const roundSchema = z.object({
  id: z.string(),
  seq: z.number().int(),
  status: statusSchema,
  error: z.string().nullable(),
  config: z.record(z.string(), z.unknown()),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  /** This workbench is running it now (a 'running' round that is not live was interrupted). */
  live: z.boolean(),
  /** Another live process runs it (the CLI on this data folder: "process 1234"); null otherwise. */
  elsewhere: z.string().nullable(),
  /** Where a live round is; null otherwise. */
  progress: progressSchema.nullable(),
  games: z.array(gameSchema),
});
export type DesignRound = z.infer<typeof roundSchema>;

/** A round in the list: the round's own fields, its games counted instead of carried. */
const rowSchema = roundSchema.pick({ id: true, seq: true, status: true, error: true, config: true, startedAt: true, endedAt: true, live: true, elsewhere: true }).extend({
  games: z.number().int(),
  accepted: z.number().int(),
  attempts: z.number().int(),
});
export type DesignRoundRow = z.infer<typeof rowSchema>;

export const designCalls = {
  'design.preview': defineCall({
    name: 'design.preview',
    summary: "The exact prompt the round's first attempt would send, with the seeds it would show; nothing runs.",
    input: designPreviewInput,
    output: z.object({ prompt: z.string(), system: z.string().nullable(), builder: z.string(), document: z.object({ docId: z.number().int(), text: z.string(), truncated: z.boolean(), corpus: z.string(), maxWords: z.number().int() }).nullable(), skill: z.string(), seed: z.number().int(), positives: z.array(seedSchema), negatives: z.array(seedSchema), memory: z.number().int() }),
  }),
  'design.start': defineCall({
    name: 'design.start',
    summary: 'Starts a design round in the background and answers with its id; design.progress follows it.',
    input: designStartInput,
    output: z.object({ roundId: z.string(), seq: z.number().int() }),
  }),
  'design.cancel': defineCall({
    name: 'design.cancel',
    summary: 'Stops a running round: the attempt in flight is abandoned, what was stored stays.',
    input: z.object({ id: roundId }).strict(),
    output: z.object({ cancelled: z.boolean() }),
  }),
  'design.list': defineCall({
    name: 'design.list',
    summary: 'Design rounds, newest first.',
    input: z.object({ limit: z.number().int().min(1).max(1000).default(100) }).strict(),
    output: z.array(rowSchema),
  }),
  'design.get': defineCall({
    name: 'design.get',
    summary: 'One round in full: every game, every attempt (prompt, answer, program, verdicts, why rejected), and what play measured.',
    input: z.object({ id: roundId }).strict(),
    output: roundSchema,
  }),
} as const;

export const designEvents = {
  'design.progress': defineEvent({ name: 'design.progress', summary: 'Where a running round is: game k of N, attempt k of N, stage, tokens per second.', payload: progressSchema }),
  'design.changed': defineEvent({ name: 'design.changed', summary: "A round's record changed (started, an attempt stored, a game finished, the round ended).", payload: z.object({ roundId: z.string(), status: statusSchema }) }),
} as const;
