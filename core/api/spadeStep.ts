import { z } from 'zod';

/**
 * SPADE's wrapper conversion of one step (docs/spade-formats.md section 2), the one definition that
 * the harness reply, the episode store, JSONL and the API all use.
 */

/** A float as JSON carries it: non-finite values travel as these strings. */
export const spadeRewardSchema = z.union([z.number(), z.enum(['NaN', 'Infinity', '-Infinity'])]);
export type SpadeReward = z.infer<typeof spadeRewardSchema>;

/**
 * SPADE's `_sanitize_info_dict` keeps ints, floats, bools and None, drops strings and passes the
 * rest through float(). Strings still arrive here: a non-finite float ('NaN', 'Infinity',
 * '-Infinity') and an int beyond 2**53 (decimal digits) travel as text so JSON keeps them whole.
 */
export const spadeInfoValueSchema = z.union([z.number(), z.boolean(), z.null(), z.string()]);
export const spadeInfoSchema = z.record(z.string(), spadeInfoValueSchema);

export const spadeStepSchema = z.object({
  observation: z.string(),
  reward: spadeRewardSchema,
  terminated: z.boolean(),
  truncated: z.boolean(),
  info: spadeInfoSchema,
  /** 'exception': step raised (observation "Error: <msg>", -1, terminated); 'shape': not a 5-tuple. */
  error: z.enum(['exception', 'shape']).optional(),
});
export type SpadeStep = z.infer<typeof spadeStepSchema>;

/** SPADE's wrapper conversion of reset (an exception gives "Error during reset. Starting new game."). */
export const spadeResetSchema = z.object({
  observation: z.string(),
  info: spadeInfoSchema,
});
export type SpadeReset = z.infer<typeof spadeResetSchema>;
