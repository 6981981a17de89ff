import { z } from 'zod';
import { spadeResetSchema, spadeStepSchema } from './spadeStep';

/**
 * Why a harness call failed: one spelling per cause, shared by both sides (native/harness_messages.py
 * ErrorKind is generated from this list). `crashed` is the one spelling of an interpreter that died
 * under a call: the hosts always wrote it, and only the audit's judge wrote `crash` (never stored:
 * core/audit/pool.ts counted it as a restart and the audit's result keeps the message, not the kind).
 */
export const HARNESS_ERROR_KINDS = [
  /** The game's source did not load (syntax, exec, no class, instantiate, missing method). */
  'load_error',
  /** The game's own code raised. */
  'env_error',
  /** A call ran past its limit. */
  'timeout',
  /** The interpreter went past its memory limit and was replaced. */
  'memory',
  /** The interpreter died under the call (exit, signal, a fatal error, a reply that is no reply). */
  'crashed',
  /** Stopped by the user. */
  'cancelled',
  /** The runtime was shut down while the call waited. */
  'closed',
  /** No interpreter of that kind here (no python3, no sandbox). */
  'unavailable',
  /** A request the harness cannot take (not JSON, unknown command, bad field). */
  'protocol',
  'unknown_session',
  /** A restore token or file the session does not hold. */
  'not_found',
  'snapshot_unsupported',
  /** A tool call's block that SPADE's parser does not read. */
  'unreadable_call',
] as const;
export const harnessErrorKindSchema = z.enum(HARNESS_ERROR_KINDS);
export type HarnessErrorKind = z.infer<typeof harnessErrorKindSchema>;

/**
 * A failed harness call: kind (load_error, env_error, timeout, protocol ...), Python's type and
 * message. The one definition the harness reply (core/runtime/harnessMessages.ts, and the Python
 * generated from it) and the API's session calls both use.
 */
export const harnessErrorSchema = z
  .object({
    kind: harnessErrorKindSchema,
    type: z.string(),
    message: z.string(),
    traceback: z.string().optional(),
    line: z.number().int().nullable().optional(),
    col: z.number().int().nullable().optional(),
    endLine: z.number().int().optional(),
    endCol: z.number().int().optional(),
    detail: z.string().optional(),
    stage: z.string().optional(),
    missingModule: z.string().optional(),
    frames: z.array(z.object({ line: z.number().int(), function: z.string() }).loose()).optional(),
    /** True when the interpreter was killed and replaced: the session is gone (the host says so). */
    restarted: z.boolean().optional(),
    /** SPADE's view of the failed step or reset ("Error: <msg>", -1, terminated). */
    spade: z.union([spadeStepSchema, spadeResetSchema]).optional(),
  })
  // Runtimes add their own facts to an error (limits, exit codes): open on purpose.
  .catchall(z.unknown());
export type HarnessError = z.infer<typeof harnessErrorSchema>;
