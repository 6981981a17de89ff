import { z } from 'zod';
import { hashSchema, runtimeChoiceSchema, runtimeKindSchema } from '../schemas';
import { defineCall } from '../contract';
import { MAX_ACTION_INPUT_CHARS } from '../spadeRules';
import { harnessErrorSchema, type HarnessError } from '../harnessError';

/**
 * Running environment code: sessions on the sandboxed Pyodide pool or on native CPython, one
 * protocol for both. What the game does wrong (exceptions, bad return shapes, timeouts) comes back
 * as data with `ok: false`; only a bad request or an unknown session is an ApiError.
 */

const sessionId = z.string().min(1).max(100);
const hash = hashSchema;
const action = z.string().max(MAX_ACTION_INPUT_CHARS);

export { runtimeKindSchema, runtimeChoiceSchema, type RuntimeKind, type RuntimeChoice } from '../schemas';

export { harnessErrorSchema };
export type HarnessErrorData = HarnessError;

/** What a game returned from step(), JSON-safe, with the real Python type of each item. */
export const stepReplySchema = z
  .object({
    shape: z.enum(['tuple5', 'other']).optional(),
    observation: z.unknown().optional(),
    reward: z.unknown().optional(),
    terminated: z.unknown().optional(),
    truncated: z.unknown().optional(),
    info: z.unknown().optional(),
    /** e.g. ["str", "numpy.float64", "numpy.bool_", "bool", "dict"] */
    types: z.array(z.string()).optional(),
    raw: z.unknown().optional(),
    action: z.string().optional(),
    error: harnessErrorSchema.optional(),
    state: z.unknown().optional(),
  })
  .loose();
export type StepReply = z.infer<typeof stepReplySchema>;

export const resetReplySchema = z
  .object({
    shape: z.enum(['tuple2', 'str', 'other']).optional(),
    observation: z.unknown().optional(),
    info: z.unknown().optional(),
    types: z.array(z.string()).optional(),
    raw: z.unknown().optional(),
    error: harnessErrorSchema.optional(),
  })
  .loose();
export type ResetReply = z.infer<typeof resetReplySchema>;

function reply<T extends z.ZodType>(result: T) {
  return z.object({
    ok: z.boolean(),
    result: result.optional(),
    error: harnessErrorSchema.optional(),
    /** What the game printed during the call (capped). */
    output: z.string().optional(),
    elapsedMs: z.number(),
  });
}

/** A bounded, typed tree of values: {t, v} | {t, len, items, more} | {t, fields}. */
export const stateNodeSchema: z.ZodType<unknown> = z.unknown();

export const poolStatusSchema = z.object({
  started: z.boolean(),
  size: z.number().int(),
  ready: z.number().int(),
  busy: z.number().int(),
  starting: z.number().int(),
  restarted: z.number().int(),
  sessions: z.number().int(),
  coldMs: z.number().nullable(),
  python: z.string().nullable(),
  lastRestartReason: z.string().nullable(),
  /** Seconds the pool has been starting with no interpreter ready yet (a cold start takes several), else null. */
  startingSec: z.number().nullable(),
});

export const runtimeStatusSchema = z.object({
  pool: poolStatusSchema,
  native: z.object({
    python: z.object({ path: z.string(), version: z.string(), numpy: z.boolean() }).nullable(),
    sessions: z.number().int(),
    crashes: z.number().int(),
    isolation: z.object({ network: z.enum(['namespace', 'not applied']), networkDetail: z.string(), limits: z.array(z.string()) }),
  }),
  sessions: z.number().int(),
});
export type RuntimeStatus = z.infer<typeof runtimeStatusSchema>;

export const syntaxErrorSchema = z.object({
  line: z.number().int(),
  col: z.number().int(),
  endLine: z.number().int().optional(),
  endCol: z.number().int().optional(),
  message: z.string(),
});

export const runtimeCalls = {
  'runtime.open': defineCall({
    name: 'runtime.open',
    summary: 'Load an environment (inline source or a stored version) into a new runtime session.',
    input: z
      .object({
        source: z.string().max(4_000_000).optional(),
        versionHash: hash.optional(),
        /** auto: Pyodide unless the game needs numpy & co., then native CPython. */
        runtime: runtimeChoiceSchema.optional(),
        maxTurns: z.number().int().min(1).max(10_000).optional(),
        /** respect: Cls() then Cls(max_turns=budget) (SPADE's training); legacy: the reverse. */
        mode: z.enum(['respect', 'legacy']).optional(),
      })
      .strict()
      .refine((o) => (o.source === undefined) !== (o.versionHash === undefined), 'Give exactly one of a source or a stored version.'),
    output: z.object({
      ok: z.boolean(),
      sessionId: z.string().optional(),
      runtime: runtimeKindSchema,
      /** 'sandboxed' for Pyodide; 'reduced' for native CPython, which is less isolated. */
      isolation: z.enum(['sandboxed', 'reduced']),
      className: z.string().optional(),
      maxTurns: z.number().int().nullable().optional(),
      toolUse: z.boolean().optional(),
      hasSolution: z.boolean().optional(),
      python: z.string().optional(),
      /** Why auto mode chose native CPython. */
      fallbackReason: z.string().optional(),
      error: harnessErrorSchema.optional(),
      output: z.string().optional(),
      elapsedMs: z.number(),
    }),
  }),
  'runtime.reset': defineCall({
    name: 'runtime.reset',
    summary: 'reset(seed) on a session; the seed also seeds the session’s own random module.',
    input: z.object({ sessionId, seed: z.number().int().nullable().optional() }).strict(),
    output: reply(resetReplySchema),
  }),
  'runtime.step': defineCall({
    name: 'runtime.step',
    summary: 'step(action) on a session.',
    input: z.object({ sessionId, action }).strict(),
    output: reply(stepReplySchema),
  }),
  'runtime.play': defineCall({
    name: 'runtime.play',
    summary: 'A whole action script inside the interpreter: optional reset(seed), then step until done or the script ends.',
    input: z
      .object({
        sessionId,
        actions: z.array(action).max(100_000),
        seed: z.number().int().nullable().optional(),
        reset: z.boolean().optional(),
        stopWhenDone: z.boolean().optional(),
        /** Include the state tree after each step (slower). */
        withState: z.boolean().optional(),
      })
      .strict(),
    output: reply(z.object({ reset: resetReplySchema.optional(), steps: z.array(stepReplySchema) })),
  }),
  'runtime.state': defineCall({
    name: 'runtime.state',
    summary: 'The game instance’s attributes as a bounded tree with Python type names.',
    input: z.object({ sessionId }).strict(),
    output: reply(z.object({ className: z.string().nullable(), fields: z.array(z.tuple([z.string(), stateNodeSchema])) })),
  }),
  'runtime.solution': defineCall({
    name: 'runtime.solution',
    summary: 'What the game’s own solution() returns for the current episode.',
    input: z.object({ sessionId }).strict(),
    output: reply(z.object({ value: z.unknown(), type: z.string() })),
  }),
  'runtime.snapshot': defineCall({
    name: 'runtime.snapshot',
    summary: 'Keep a copy of the game state (deepcopy, inside the interpreter) and return its token.',
    input: z.object({ sessionId }).strict(),
    output: reply(z.object({ token: z.string(), method: z.string() })),
  }),
  'runtime.restore': defineCall({
    name: 'runtime.restore',
    summary: 'Put a snapshot back (the token stays usable).',
    input: z.object({ sessionId, token: z.string().min(1).max(200) }).strict(),
    output: reply(z.object({ restored: z.boolean() })),
  }),
  'runtime.close': defineCall({
    name: 'runtime.close',
    summary: 'End a session and free its interpreter state.',
    input: z.object({ sessionId }).strict(),
    output: z.object({ closed: z.boolean() }),
  }),
  'runtime.checkSyntax': defineCall({
    name: 'runtime.checkSyntax',
    summary: 'Python’s own parser on a source: line, column and message of the first syntax error.',
    input: z.object({ source: z.string().max(4_000_000), runtime: runtimeKindSchema.optional() }).strict(),
    output: z.object({ ok: z.boolean(), errors: z.array(syntaxErrorSchema), python: z.string() }),
  }),
  'runtime.status': defineCall({
    name: 'runtime.status',
    summary: 'The interpreter pool (ready, busy, restarted) and the native runtime; warm: start the pool.',
    input: z.object({ warm: z.boolean().optional() }).strict(),
    output: runtimeStatusSchema,
  }),
  'runtime.cancelStart': defineCall({
    name: 'runtime.cancelStart',
    summary: "Stop the Pyodide pool's cold start (no interpreter ready yet): the starting interpreters are stopped and the pool is idle until its next use.",
    input: z.object({}).strict(),
    output: z.object({ cancelled: z.boolean() }),
  }),
} as const;
