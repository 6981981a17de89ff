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

const turnSchema = z.object({ idx: z.number().int(), text: z.string().nullable(), action: z.record(z.string(), z.unknown()).nullable(), observation: z.record(z.string(), z.unknown()).nullable(), reward: z.number().nullable(), done: z.boolean(), error: z.string().nullable() });
export const wireCheckSchema = z.object({ id: z.enum(['wire.determinism', 'wire.seed_use', 'wire.malformed_action', 'wire.reward_range']), status: z.enum(['pass', 'warn', 'fail', 'skip']), message: z.string(), evidence: z.record(z.string(), z.unknown()) });

/** An environment another OpenEnv server serves, open in the app (core/openenv/remoteSessions.ts). */
export const remoteViewSchema = z.object({
  id: z.string(),
  url: z.string(),
  server: z.object({ name: z.string().nullable(), version: z.string().nullable(), description: z.string().nullable(), hintMode: z.enum(['on', 'off', 'both']).nullable(), textField: z.string().nullable(), actionSchema: z.record(z.string(), z.unknown()) }),
  seed: z.number().int().nullable(),
  hint: z.boolean(),
  live: z.boolean(),
  done: z.boolean(),
  turns: z.array(turnSchema),
  replay: z.object({ divergence: z.number().int().nullable(), replayed: z.number().int(), message: z.string() }).nullable(),
  audit: z
    .object({
      url: z.string(),
      server: z.object({ name: z.string().nullable(), version: z.string().nullable(), hintMode: z.enum(['on', 'off', 'both']).nullable(), textField: z.string().nullable() }),
      verdict: z.enum(['pass', 'warn', 'fail']),
      checks: z.array(wireCheckSchema),
      elapsedMs: z.number(),
    })
    .nullable(),
});
export type RemoteEnvView = z.infer<typeof remoteViewSchema>;
const remoteId = z.object({ id: z.string().max(100) }).strict();

export const openenvCalls = {
  'openenv.remote.open': defineCall({
    name: 'openenv.remote.open',
    summary: "Opens an environment another OpenEnv server serves (its base URL): reads /health, /metadata and /schema, opens a /ws session and resets it. The hint only where the server has one (the workbench's serve-env).",
    input: z.object({ url: z.string().min(1).max(2000), seed: z.number().int().min(0).max(2 ** 31 - 1).nullable().default(0), hint: z.boolean().default(false) }).strict(),
    output: remoteViewSchema,
  }),
  'openenv.remote.step': defineCall({
    name: 'openenv.remote.step',
    summary: "Sends one action: the text in the action's text field, or a JSON object on a server whose action has other fields. A server's refusal is recorded as the turn's error.",
    input: z.object({ id: z.string().max(100), text: z.string().max(1_000_000) }).strict(),
    output: remoteViewSchema,
  }),
  'openenv.remote.reset': defineCall({
    name: 'openenv.remote.reset',
    summary: 'Resets the session (a fresh one if the server dropped it); the record goes on after it.',
    input: z.object({ id: z.string().max(100), seed: z.number().int().min(0).max(2 ** 31 - 1).nullable() }).strict(),
    output: remoteViewSchema,
  }),
  'openenv.remote.replay': defineCall({
    name: 'openenv.remote.replay',
    summary: 'Replays the record since its last reset on a fresh session and flags the first turn that differs.',
    input: remoteId,
    output: remoteViewSchema,
  }),
  'openenv.remote.audit': defineCall({
    name: 'openenv.remote.audit',
    summary: "Audits the server over the wire: wire.determinism, wire.seed_use, wire.malformed_action, wire.reward_range (checks of their own, not SPADE's audit).",
    input: remoteId,
    output: remoteViewSchema,
  }),
  'openenv.remote.show': defineCall({ name: 'openenv.remote.show', summary: 'An open OpenEnv session and its record.', input: remoteId, output: remoteViewSchema }),
  'openenv.remote.close': defineCall({ name: 'openenv.remote.close', summary: 'Closes the session and forgets its record.', input: remoteId, output: z.object({ closed: z.boolean() }) }),

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
