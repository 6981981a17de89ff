import { z } from 'zod';
import { spadeResetSchema, spadeStepSchema } from '../api/spadeStep';
import { harnessErrorSchema } from '../api/harnessError';
import type { AuditOptions, EnvAudit } from './auditOptions';
import { runtimeKindSchema } from '../api/schemas';

/**
 * Every message between the host and the Python harness (native/harness.py), defined once. The
 * TypeScript types are inferred from these schemas; native/harness_messages.py (TypedDicts) is
 * generated from them by scripts/gen-python-contract.mjs, and tests/integration/runtime/contract.test.ts
 * fails when that file is stale or when a real harness reply leaves these shapes.
 *
 * zod rather than a JSON Schema file: the rest of the contract (core/api) is zod already, the
 * types come from it without a second generator, and z.toJSONSchema() gives the Python generator a
 * plain schema to read.
 *
 * Reply objects are strict: a key that Python adds or renames without this file fails the test.
 */

export { HARNESS_ERROR_KINDS, harnessErrorKindSchema, harnessErrorSchema, type HarnessError, type HarnessErrorKind } from '../api/harnessError';

export const harnessReplySchema = z.discriminatedUnion('ok', [
  z.object({ id: z.number().int().nullable(), ok: z.literal(true), result: z.unknown(), output: z.string().optional() }).strict(),
  z.object({ id: z.number().int().nullable(), ok: z.literal(false), error: harnessErrorSchema, output: z.string().optional() }).strict(),
]);
export type HarnessReply = z.infer<typeof harnessReplySchema>;

// ---------------------------------------------------------------------------------------------
// Requests

export const loadOptionsSchema = z
  .object({
    /** SPADE's budget (SpadeConfig.max_turns); a game's own max_turns is capped to it. */
    maxTurns: z.number().int().optional(),
    /** 'legacy': SPADE's pool admission instantiation (Cls(max_turns=...) first). */
    mode: z.enum(['respect', 'legacy']).optional(),
    /** The workbench's labelled option: seeded global generators (never SPADE's default). */
    deterministic: z.boolean().optional(),
    /** Whether replies carry SPADE's wrapper conversion (`spade` fields); on by default. */
    spadeMode: z.boolean().optional(),
    /** Per-call limit inside the interpreter, seconds. */
    timeoutSec: z.number().optional(),
  })
  .strict();
export type LoadOptions = z.infer<typeof loadOptionsSchema>;

const seed = z.number().int().nullable();

/** What the audit's `audit` command reads: the audit's options and how the judge reports as it goes. */
export type AuditWireOptions = AuditOptions & { phases?: boolean | 'lasting'; streamResults?: boolean };

/** Every command: native/harness.py BUILTIN_COMMANDS and the audit's `audit` (native/audit_checks.py, on the judge). */
export const harnessCommandSchemas = {
  ping: z.object({ cmd: z.literal('ping') }).strict(),
  check_syntax: z.object({ cmd: z.literal('check_syntax'), source: z.string() }).strict(),
  load: z.object({ cmd: z.literal('load'), source: z.string(), options: loadOptionsSchema.optional() }).strict(),
  /** `preseed` (only with seed null): the session's generators are seeded with it, and the game's reset() gets no seed. */
  reset: z.object({ cmd: z.literal('reset'), seed: seed.optional(), preseed: z.number().int().optional() }).strict(),
  step: z.object({ cmd: z.literal('step'), action: z.string() }).strict(),
  play: z
    .object({
      cmd: z.literal('play'),
      actions: z.array(z.string()).readonly(),
      seed: seed.optional(),
      reset: z.boolean().optional(),
      stopWhenDone: z.boolean().optional(),
      state: z.boolean().optional(),
    })
    .strict(),
  state: z.object({ cmd: z.literal('state') }).strict(),
  solution: z.object({ cmd: z.literal('solution') }).strict(),
  snapshot: z.object({ cmd: z.literal('snapshot') }).strict(),
  restore: z.object({ cmd: z.literal('restore'), token: z.string() }).strict(),
  get_tools: z.object({ cmd: z.literal('get_tools') }).strict(),
  /**
   * SPADE's execute_tool. `block`: the text inside a call's `<tool_call>` tags, which the harness reads
   * with SPADE's parser (native/spade_tool_calls.py) and whose Python values it passes on. Without a
   * block, `name` and `arguments` (any JSON value) go to execute_tool as they are (older recordings).
   */
  tool: z.object({ cmd: z.literal('tool'), block: z.string().optional(), name: z.string().optional(), arguments: z.unknown().optional() }).strict(),
  close: z.object({ cmd: z.literal('close') }).strict(),
  /** The audit's options (./auditOptions, re-exported by core/audit/types); the judge reads each field itself. */
  audit: z.object({ cmd: z.literal('audit'), source: z.string(), options: z.custom<AuditWireOptions>((v) => typeof v === 'object' && v !== null && !Array.isArray(v)) }).strict(),
} as const;
export type BuiltinCommand = keyof typeof harnessCommandSchemas;

/** What the host adds to every request on the wire (./protocol WireRequest): the reply's id, the session, the host's limit. */
export const wireFieldsSchema = z.object({ id: z.number().int().nullable().optional(), session: z.string().optional(), timeoutSec: z.number().optional() }).strict();
export type BuiltinRequest = z.infer<(typeof harnessCommandSchemas)[BuiltinCommand]>;

// ---------------------------------------------------------------------------------------------
// Results (`result` of an ok reply), per command

/** A value described for the host (native/harness_values.py describe/plain): any JSON. */
const described = z.unknown();

export const spadeValidationSchema = z
  .object({
    ok: z.boolean(),
    /** SPADE's exact message, e.g. "Game step() failed on action 1 '\\boxed{1}': ...". */
    message: z.string().nullable(),
    stage: z.enum(['reset', 'step', 'reset2']).nullable(),
  })
  .strict();
export type SpadeValidation = z.infer<typeof spadeValidationSchema>;

export const harnessResultSchemas = {
  ping: z.object({ runtime: runtimeKindSchema, python: z.string(), numpy: z.boolean() }).strict(),
  check_syntax: z
    .object({
      ok: z.boolean(),
      errors: z.array(z.object({ line: z.number().int(), col: z.number().int(), message: z.string(), endLine: z.number().int().optional(), endCol: z.number().int().optional() }).strict()),
      python: z.string(),
    })
    .strict(),
  load: z
    .object({
      className: z.string(),
      maxTurns: z.number().int().nullable(),
      budget: z.number().int(),
      toolUse: z.boolean(),
      hasSolution: z.boolean(),
      /** False when the game certainly has no get_tools() (its tools are then []): no call needed. */
      mayHaveTools: z.boolean(),
      runtime: runtimeKindSchema,
      python: z.string(),
      spadeMode: z.boolean(),
      deterministic: z.boolean(),
      /** PYTHONHASHSEED of the interpreter when fixed (SPADE fixes none), else null. */
      hashSeed: z.string().nullable(),
      /** Present in SPADE mode. */
      validation: spadeValidationSchema.optional(),
      restoredShared: z.array(z.string()).optional(),
    })
    .strict(),
  reset: z
    .object({
      observation: described,
      info: described,
      types: z.array(z.string()),
      shape: z.enum(['tuple2', 'str', 'other']),
      raw: described.optional(),
      spade: spadeResetSchema,
      /** SPADE mode, seeded reset: the seeding calls the game made (random.seed, numpy.random.seed ...). */
      seeded: z.array(z.string()).optional(),
      /** SPADE mode: reset(seed) seeded no generator, so SPADE could not reproduce this episode if it draws randomness. */
      seedIgnored: z.literal(true).optional(),
    })
    .strict(),
  step: z
    .object({
      observation: described.optional(),
      reward: described.optional(),
      terminated: described.optional(),
      truncated: described.optional(),
      info: described.optional(),
      /** Real Python type names of the returned values (e.g. numpy.bool_). */
      types: z.array(z.string()),
      shape: z.enum(['tuple5', 'other']),
      raw: described.optional(),
      spade: spadeStepSchema,
      state: described.optional(),
    })
    .strict(),
  snapshot: z.object({ token: z.string(), method: z.string() }).strict(),
  restore: z.object({ restored: z.literal(true) }).strict(),
  /** SPADE's execute_tool: output and returncode; `raw` when a game's override returned something else. */
  tool: z.object({ output: described, returncode: described, raw: described.optional() }).strict(),
  /** The game's OpenAI-style tool list ([] for plain games), described. */
  get_tools: z.array(described),
  /** `plan`: a tool-use solution() text that describes its calls, as the actions it stands for (native/harness_solution.py). */
  solution: z.object({ value: described, type: z.string(), plan: z.array(z.string()).optional() }).strict(),
  close: z.object({ closed: z.boolean(), restoredShared: z.array(z.string()).optional() }).strict(),
  /** The judge's raw audit (./auditOptions EnvAudit), finished by the host (withHostChecks). */
  audit: z.custom<EnvAudit>(),
} as const;

/** A step that raised, inside `play`: the action echoed, the error, SPADE's view of it. */
export const failedStepSchema = z.object({ action: z.string(), error: harnessErrorSchema, spade: spadeStepSchema.optional() }).strict();
export const failedResetSchema = z.object({ error: harnessErrorSchema, spade: spadeResetSchema.optional() }).strict();

harnessResultSchemas satisfies Partial<Record<BuiltinCommand, z.ZodType>>;

export const playResultSchema = z
  .object({
    reset: z.union([harnessResultSchemas.reset, failedResetSchema]).optional(),
    steps: z.array(z.union([harnessResultSchemas.step, failedStepSchema])),
  })
  .strict();

/**
 * The result of each command, so `RuntimeService.call` answers with its command's type and callers
 * need no cast. `state` has no shape of its own (described fields, any JSON).
 */
export type HarnessCommand = BuiltinCommand;
type ResultSchemas = typeof harnessResultSchemas & { play: typeof playResultSchema };
export type ResultOf<C extends HarnessCommand> = C extends keyof ResultSchemas ? z.infer<ResultSchemas[C]> : unknown;
export type ReplyOf<C extends HarnessCommand> = { id: number | null; ok: true; result: ResultOf<C>; output?: string } | Extract<HarnessReply, { ok: false }>;
/**
 * A reply read as its command's: the one place the host takes the shape on trust. What a reply holds
 * comes from the harness, not from the game (the game's values inside are `described`, unknown), and
 * tests/integration/runtime/contract.test.ts parses real replies of every command with these schemas.
 */
export const replyOf = <C extends HarnessCommand>(_cmd: C, reply: HarnessReply): ReplyOf<C> => reply as ReplyOf<C>;

export type LoadResult = z.infer<typeof harnessResultSchemas.load>;
export type ResetResult = z.infer<typeof harnessResultSchemas.reset>;
export type StepResult = z.infer<typeof harnessResultSchemas.step>;
export type PlayResult = z.infer<typeof playResultSchema>;
export type ToolResult = z.infer<typeof harnessResultSchemas.tool>;
