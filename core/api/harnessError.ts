import { z } from 'zod';
import { spadeResetSchema, spadeStepSchema } from './spadeStep';

/**
 * A failed harness call: kind (load_error, env_error, timeout, protocol ...), Python's type and
 * message. The one definition the harness reply (core/runtime/harnessMessages.ts, and the Python
 * generated from it) and the API's session calls both use.
 */
export const harnessErrorSchema = z
  .object({
    kind: z.string(),
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
