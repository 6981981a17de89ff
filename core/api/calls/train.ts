import { z } from 'zod';
import { defineCall } from '../contract';
import { jobSummarySchema } from './jobs';

/**
 * A local GRPO job (the train-grpo recipe): the adapters it saved, each one evaluable, and the
 * before/after evaluations its log reports (base and checkpoint as two model runs, Runs → compare).
 */
export const trainRunSchema = z.object({
  /** The job's run folder ($JOB_DIR/run), where the trainer writes adapter-final and checkpoint-N. */
  runDir: z.string().nullable(),
  /** Why nothing could be read, when so. */
  note: z.string().nullable(),
  checkpoints: z.array(z.object({ name: z.string(), path: z.string(), step: z.number().int().nullable(), final: z.boolean() })),
  /** Each evaluation the job finished: the two run ids and the adapter played as `checkpoint`. */
  evaluations: z.array(z.object({ base: z.string(), checkpoint: z.string(), adapter: z.string() })),
});
export type TrainRun = z.infer<typeof trainRunSchema>;

export const trainCalls = {
  'train.checkpoints': defineCall({
    name: 'train.checkpoints',
    summary: "A train-grpo job's saved adapters (adapter-final, checkpoint-N) and the evaluations its log reports (base and checkpoint run ids).",
    input: z.object({ id: z.string().min(1).max(64) }).strict(),
    output: trainRunSchema,
  }),
  'train.evaluate': defineCall({
    name: 'train.evaluate',
    summary: "Evaluate one of a finished train-grpo job's adapters: a new job (same recipe, library and settings, TRAIN_EVALUATE set) that plays base and checkpoint on the held-back seeds as two model runs.",
    input: z.object({ id: z.string().min(1).max(64), adapter: z.string().min(1).max(4096) }).strict(),
    output: jobSummarySchema,
  }),
} as const;
