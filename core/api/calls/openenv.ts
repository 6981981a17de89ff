import { z } from 'zod';
import { defineCall } from '../contract';

/**
 * The OpenEnv server of the app (what `spade-workbench serve-env` is on the command line): started
 * over a library selection, on 127.0.0.1, its URL and live /ws sessions shown, stopped.
 */

const sessionSchema = z.object({ id: z.string(), remote: z.string(), since: z.string(), steps: z.number().int(), task: z.string().nullable() });

export const openEnvStatusSchema = z.object({
  running: z.boolean(),
  url: z.string().nullable(),
  selection: z.string().nullable(),
  environments: z.number().int(),
  tasks: z.number().int(),
  hint: z.enum(['on', 'off', 'both']).nullable(),
  maxTurns: z.number().int().nullable(),
  concurrency: z.number().int().nullable(),
  startedAt: z.string().nullable(),
  sessions: z.array(sessionSchema),
  /** Environments of the selection left out, with why (tool-use ones). */
  skipped: z.array(z.string()),
});
export type OpenEnvStatus = z.infer<typeof openEnvStatusSchema>;

export const openenvCalls = {
  'openenv.status': defineCall({
    name: 'openenv.status',
    summary: "The app's OpenEnv server: whether it runs, its URL, what it serves and its live sessions.",
    input: z.object({}).strict(),
    output: openEnvStatusSchema,
  }),
  'openenv.start': defineCall({
    name: 'openenv.start',
    summary: "Starts an OpenEnv server on 127.0.0.1 over a library selection (as serve-env does); a conflict when one already runs.",
    input: z
      .object({
        /** A library query; empty: every environment. */
        selection: z.string().max(2000),
        /** 0: any free port. */
        port: z.number().int().min(0).max(65535).default(8000),
        hint: z.enum(['on', 'off', 'both']).default('both'),
        maxTurns: z.number().int().min(1).max(10_000).default(30),
        concurrency: z.number().int().min(1).max(4096).default(64),
        seeds: z.number().int().min(1).max(100_000).default(8),
        seedStart: z.number().int().min(0).max(2 ** 31 - 1).default(0),
      })
      .strict(),
    output: openEnvStatusSchema,
  }),
  'openenv.stop': defineCall({
    name: 'openenv.stop',
    summary: "Stops the app's OpenEnv server (its sessions are closed; their recorded episodes stay).",
    input: z.object({}).strict(),
    output: openEnvStatusSchema,
  }),
} as const;
