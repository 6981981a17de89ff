import { z } from 'zod';
import { hashSchema, runtimeKindSchema } from '../schemas';
import { defineCall, defineEvent } from '../contract';

/**
 * Audit: SPADE's own load checks plus the ones it lacks, over one environment version or a batch
 * (a selection or the whole memory). Results are stored per environment version.
 */
const hash = hashSchema;
const checkId = z.string().min(1).max(64).regex(/^[a-z0-9_.*-]+$/, 'a check id like spade.step, reset-leak or tool.*');
const status = z.enum(['pass', 'warn', 'fail', 'skip']);
const verdict = z.enum(['pass', 'warn', 'fail']);
const batchId = z.string().min(1).max(64);
/** Names one single audit while it runs, chosen by the caller: its progress events and its cancel. */
const runId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ or -, at most 64');

export const checkResultSchema = z.object({
  id: z.string(),
  status,
  message: z.string(),
  evidence: z.record(z.string(), z.unknown()),
});

export const storedAuditSchema = z.object({
  hash: z.string(),
  verdict,
  spadeAccepts: z.boolean(),
  className: z.string().nullable(),
  toolUse: z.boolean(),
  checks: z.array(checkResultSchema),
  elapsedMs: z.number(),
  batchId: z.string().nullable(),
  createdAt: z.string(),
  /** Where it ran: the Pyodide sandbox or native CPython (null for audits stored before this was kept). */
  runtime: runtimeKindSchema.nullable(),
});

const batchSchema = z.object({
  id: z.string(),
  state: z.enum(['running', 'cancelled', 'done', 'failed']),
  total: z.number().int(),
  done: z.number().int(),
  options: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const runOptions = {
  /** Only these checks (a trailing `.*` selects a family); all when absent. */
  checks: z.array(checkId).max(64).optional(),
  callTimeoutSec: z.number().min(0.1).max(600).optional(),
};

/** Where a pool audit runs: this machine (default), a saved job host's Slurm over SSH, or a Ray head's dashboard address. */
export const sweepTargetSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('local') }).strict(),
  z.object({ kind: z.literal('slurm'), host: z.string().min(1).max(300).regex(/^[^\s]+$/, 'a host without spaces') }).strict(),
  z.object({
    kind: z.literal('ray'),
    /** HOST:PORT or ray://HOST:PORT (the head's dashboard; port 8265 when none is given). */
    address: z.string().min(1).max(300),
    /** A Python on the head that has ray, for the driver; else python3 or python there. */
    python: z.string().min(1).max(1000).optional(),
  }).strict(),
]);
const sweepId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a sweep id');
const sweepState = z.enum(['running', 'elsewhere', 'interrupted', 'done', 'cancelled', 'failed']);

export const sweepSchema = z.object({
  id: z.string(),
  query: z.string(),
  /** local, ray://HOST:PORT or slurm:HOST */
  target: z.string(),
  /** running here now; elsewhere: run by another live process on the same memory file (the CLI); interrupted: left running by a process that stopped (resume it). */
  state: sweepState,
  /** submitting work to the engine, or following results as they arrive. */
  phase: z.enum(['submitting', 'following']).nullable(),
  done: z.number().int(),
  total: z.number().int(),
  failed: z.number().int(),
  envsPerSec: z.number().nullable(),
  /** Why it failed (the engine's last error), or what its cancel stopped. */
  message: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const auditCalls = {
  'audit.run': defineCall({
    name: 'audit.run',
    summary: 'Audit one environment version now and store the result; with a runId, progress comes as audit.runProgress and audit.runCancel stops it.',
    input: z.object({ hash, runId: runId.optional(), ...runOptions }).strict(),
    output: storedAuditSchema,
  }),
  'audit.runCancel': defineCall({
    name: 'audit.runCancel',
    summary: 'Stop a single audit started with a runId: its interpreter is killed and nothing is stored (audit.run fails with cancelled).',
    input: z.object({ runId }).strict(),
    output: z.object({ cancelled: z.boolean() }),
  }),
  'audit.batch': defineCall({
    name: 'audit.batch',
    summary: 'Start auditing a selection (environment ids) or the whole memory in the background; progress comes as audit.progress.',
    input: z.object({ envIds: z.array(z.number().int().positive()).max(200_000).optional(), all: z.boolean().optional(), ...runOptions }).strict(),
    output: z.object({ batchId: z.string(), total: z.number().int() }),
  }),
  'audit.cancel': defineCall({
    name: 'audit.cancel',
    summary: 'Stop a running batch; finished results stay, and the batch can be resumed.',
    input: z.object({ batchId }).strict(),
    output: z.object({ cancelled: z.boolean() }),
  }),
  'audit.resume': defineCall({
    name: 'audit.resume',
    summary: 'Continue a cancelled or interrupted batch with the versions it has not audited yet.',
    input: z.object({ batchId }).strict(),
    output: z.object({ batchId: z.string(), total: z.number().int(), remaining: z.number().int() }),
  }),
  'audit.batches': defineCall({
    name: 'audit.batches',
    summary: 'Recent batches, newest first.',
    input: z.object({ limit: z.number().int().min(1).max(200).optional() }).strict(),
    output: z.array(batchSchema),
  }),
  'audit.results': defineCall({
    name: 'audit.results',
    summary: 'The stored audit of one environment version (null when never audited).',
    input: z.object({ hash }).strict(),
    output: storedAuditSchema.nullable(),
  }),
  'audit.replay': defineCall({
    name: 'audit.replay',
    summary: "Play a check's evidence as a recorded episode, exactly as the evidence says (seed, actions, then resetSeed for a leak), in the runtime and mode the audit used; on another version with `on`.",
    input: z.object({ hash, checkId, on: hash.optional() }).strict(),
    output: z.object({
      episodeId: z.number().int(),
      step: z.number().int(),
      referenceId: z.number().int().nullable(),
      seed: z.number().int(),
      resetSeed: z.number().int().nullable(),
      actions: z.number().int(),
      runtime: runtimeKindSchema,
      mode: z.enum(['spade', 'fresh', 'deterministic']),
    }),
  }),
  'audit.summary': defineCall({
    name: 'audit.summary',
    summary: "Over each environment's head version: verdicts, SPADE acceptance and the share failing each check.",
    input: z.object({}).strict(),
    output: z.object({
      environments: z.number().int(),
      audited: z.number().int(),
      verdicts: z.object({ pass: z.number().int(), warn: z.number().int(), fail: z.number().int() }),
      spadeAccepted: z.number().int(),
      byCheck: z.array(z.object({ id: z.string(), pass: z.number().int(), warn: z.number().int(), fail: z.number().int(), skip: z.number().int(), failShare: z.number() })),
    }),
  }),
  'audit.verdicts': defineCall({
    name: 'audit.verdicts',
    summary: 'The stored verdict (and failing check ids) of each given version; null where never audited (library column, Problems).',
    input: z.object({ hashes: z.array(hash).max(1000) }).strict(),
    output: z.array(z.object({ hash: z.string(), verdict: verdict.nullable(), failing: z.array(z.string()), createdAt: z.string().nullable() })),
  }),
  'audit.environments': defineCall({
    name: 'audit.environments',
    summary: 'Ids of environments whose head version has a given status for a check (dashboard click-through).',
    input: z.object({ checkId, status }).strict(),
    output: z.object({ ids: z.array(z.number().int()) }),
  }),
  'audit.poolStart': defineCall({
    name: 'audit.poolStart',
    summary: "Audit the library's environments that match a query (the Library's search syntax; empty: all of them) as a sweep, here, on a saved job host's Slurm or on a Ray cluster; progress comes as audit.sweepProgress. The same query, checks and target as an unfinished sweep resumes that one.",
    input: z.object({ query: z.string().max(2000), target: sweepTargetSchema.optional(), checks: runOptions.checks }).strict(),
    output: sweepSchema,
  }),
  'audit.sweeps': defineCall({
    name: 'audit.sweeps',
    summary: 'Recent pool audit sweeps, newest first, with their progress; a sweep left running by a workbench that stopped is "interrupted".',
    input: z.object({ limit: z.number().int().min(1).max(200).optional() }).strict(),
    output: z.array(sweepSchema),
  }),
  'audit.sweepResume': defineCall({
    name: 'audit.sweepResume',
    summary: 'Finish an interrupted, cancelled or failed sweep on the target it was started on: what arrived stays, nothing is counted twice.',
    input: z.object({ sweepId }).strict(),
    output: sweepSchema,
  }),
  'audit.sweepCancel': defineCall({
    name: 'audit.sweepCancel',
    summary: "Cancel a sweep: stops its Ray job or Slurm array (or this machine's audits); what arrived stays.",
    input: z.object({ sweepId }).strict(),
    output: z.object({ cancelled: z.boolean(), stopped: z.array(z.string()) }),
  }),
  'audit.sweepResults': defineCall({
    name: 'audit.sweepResults',
    summary: "A sweep's environments with the verdict of each result that arrived (null: none yet).",
    input: z.object({ sweepId }).strict(),
    output: z.array(z.object({ envId: z.number().int().nullable(), name: z.string(), hash: z.string(), verdict: verdict.nullable(), spadeAccepts: z.boolean().nullable(), failing: z.array(z.string()) })),
  }),
  'audit.sweepHosts': defineCall({
    name: 'audit.sweepHosts',
    summary: 'The job hosts the Jobs page saved (SSH and Slurm launches), as slurm targets for a sweep.',
    input: z.object({}).strict(),
    output: z.object({ hosts: z.array(z.string()) }),
  }),
} as const;

export const auditEvents = {
  'audit.runProgress': defineEvent({
    name: 'audit.runProgress',
    summary: 'A single audit (audit.run with a runId) is starting its sandbox, moved to the next check, is still running, or ended.',
    payload: z.object({
      runId: z.string(),
      hash: z.string(),
      /** starting: the sandbox's interpreters are still loading (first use: seconds). */
      state: z.enum(['starting', 'running', 'done', 'cancelled', 'failed']),
      runtime: runtimeKindSchema.nullable(),
      /** The check running now (SPADE's load checks, then the workbench's), null before the first. */
      check: z.string().nullable(),
      checksDone: z.number().int(),
      checksTotal: z.number().int(),
      elapsedSec: z.number(),
      /** The whole audit is stopped after this many seconds (its interpreter killed); null until known. */
      limitSec: z.number().nullable(),
      message: z.string().optional(),
    }),
  }),
  'audit.sweepProgress': defineEvent({
    name: 'audit.sweepProgress',
    summary: 'A pool audit sweep advanced, was submitted, finished, failed or was cancelled (the whole sweep row, as audit.sweeps lists it).',
    payload: sweepSchema,
  }),
  'audit.progress': defineEvent({
    name: 'audit.progress',
    summary: 'A batch advanced, finished, failed or was cancelled.',
    payload: z.object({
      batchId: z.string(),
      state: z.enum(['running', 'cancelled', 'done', 'failed']),
      done: z.number().int(),
      total: z.number().int(),
      failed: z.number().int(),
      /** Seconds left at the current rate; null until there is a rate. */
      etaSec: z.number().nullable(),
      lastHash: z.string().nullable(),
      message: z.string().optional(),
    }),
  }),
} as const;
