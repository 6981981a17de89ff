import { z } from 'zod';
import { defineCall } from '../contract';
import { endpointSchema, runOutput } from './models';
import { wireCheckSchema } from './openenv';
import { hashSchema } from '../schemas';

/**
 * The workbench as a client of another OpenEnv server (a URL), beyond stepping it by hand
 * (openenv.remote.*, ./openenv.ts): a model plays it as a model run record, and the wire audits
 * run on it are kept and listed (the workbench's own wire.* checks, not SPADE's audit).
 */

const runId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ or -, at most 64');

export const storedWireAuditSchema = z.object({
  id: z.number().int(),
  url: z.string(),
  serverName: z.string().nullable(),
  serverVersion: z.string().nullable(),
  verdict: z.enum(['pass', 'warn', 'fail']),
  checks: z.array(wireCheckSchema),
  elapsedMs: z.number(),
  /** Who ran it: the app's "Audit over the wire", or the CLI's openenv-audit. */
  source: z.enum(['app', 'cli']),
  createdAt: z.string(),
});
export type StoredWireAuditView = z.infer<typeof storedWireAuditSchema>;

export const openenvClientCalls = {
  'openenv.remote.play': defineCall({
    name: 'openenv.remote.play',
    summary:
      "A model plays the environment an OpenEnv server serves (its URL), seeds per arm, as a model run record (Runs): the hinted arm only where the server takes a hint (the workbench's serve-env). Progress comes as episodes.regretProgress with the runId; episodes.regretCancel with it stops the run.",
    input: z
      .object({
        url: z.string().min(1).max(2000),
        endpoint: endpointSchema,
        seeds: z.number().int().min(1).max(10_000).default(1),
        seedStart: z.number().int().min(0).max(2 ** 31 - 1).default(0),
        arms: z.array(z.enum(['hint', 'nohint'])).min(1).max(2).default(['nohint']),
        maxTurns: z.number().int().min(1).max(10_000).optional(),
        /** Chosen by the caller: progress and Cancel name the run by it. */
        runId: runId.optional(),
        /** On a serve-env that serves several games, the one to play (an env_hash of its GET /tasks); default its first. */
        env: hashSchema.optional(),
      })
      .strict(),
    output: runOutput,
  }),
  'openenv.remote.describe': defineCall({
    name: 'openenv.remote.describe',
    summary: "What an OpenEnv server says of itself (GET /health, /metadata, /schema, and serve-env's /tasks): its name, hint mode, action field and the games it serves (serve-env's, each by its env_hash; one unnamed game elsewhere).",
    input: z.object({ url: z.string().min(1).max(2000) }).strict(),
    output: z.object({
      url: z.string(),
      name: z.string().nullable(),
      hintMode: z.enum(['on', 'off', 'both']).nullable(),
      textField: z.string().nullable(),
      games: z.array(z.object({ env: z.string(), name: z.string() })),
    }),
  }),
  'openenv.remote.audits': defineCall({
    name: 'openenv.remote.audits',
    summary: "The wire audits kept for a server's URL (the app's and the CLI's openenv-audit), newest first: the workbench's own wire.* checks, not SPADE's audit.",
    input: z.object({ url: z.string().min(1).max(2000), limit: z.number().int().min(1).max(500).default(20) }).strict(),
    output: z.object({ url: z.string(), audits: z.array(storedWireAuditSchema) }),
  }),
} as const;
