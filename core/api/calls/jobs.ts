import { z } from 'zod';
import { defineCall, defineEvent } from '../contract';

/** Jobs: local runs and remote training jobs (ssh, slurm, ray), their logs, metrics and outputs. */

export const backendSchema = z.enum(['local', 'ssh', 'slurm', 'ray']);
export const jobStateSchema = z.enum(['submitting', 'pending', 'running', 'suspended', 'succeeded', 'failed', 'cancelled', 'timeout', 'lost']);
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'an environment variable name');
const text = (max: number) => z.string().max(max).refine((s) => !s.includes('\0'), 'Text fields cannot contain NUL bytes.');

export const sshTargetSchema = z
  .object({
    host: z.string().trim().min(1).max(255).regex(/^[A-Za-z0-9._:@%-]+$/, 'a host name, address or ~/.ssh/config alias'),
    port: z.number().int().min(1).max(65535).optional(),
    user: z.string().max(64).regex(/^[A-Za-z0-9._-]*$/).optional(),
    identityFile: text(4096).optional(),
    knownHostsFile: text(4096).optional(),
  })
  .strict();

export const launchSchema = z
  .object({
    name: text(200).min(1),
    backend: backendSchema,
    recipe: z.string().max(64).optional(),
    command: z.array(text(100_000)).max(500).optional(),
    workdir: text(4096).optional(),
    env: z.record(envName, text(100_000)).optional(),
    /** Names only: values come from the session's secret store. */
    secretEnv: z.array(envName).max(50).optional(),
    ssh: sshTargetSchema.optional(),
    slurm: z
      .object({
        partition: z.string().max(64).optional(),
        gpus: z.number().int().min(0).max(512).optional(),
        gres: z.string().max(100).optional(),
        time: z.string().max(32).optional(),
        cpusPerTask: z.number().int().min(1).max(4096).optional(),
        mem: z.string().max(16).optional(),
        container: text(4096).optional(),
      })
      .strict()
      .optional(),
    ray: z
      .object({
        address: z.string().url().max(2048).optional(),
        tunnel: z.boolean().optional(),
        submissionId: z.string().max(200).regex(/^[A-Za-z0-9_.-]*$/).optional(),
        tokenSecret: envName.optional(),
        numCpus: z.number().min(0).max(100_000).optional(),
        numGpus: z.number().min(0).max(10_000).optional(),
        memory: z.number().int().min(0).optional(),
        resources: z.record(z.string().max(100), z.number().min(0)).optional(),
      })
      .strict()
      .optional(),
    /** Environments from memory to ship as the run's pool (exported in SPADE's layout). */
    poolEnvIds: z.array(z.number().int().positive()).max(100_000).optional(),
    /** Ship no pool at all (otherwise the seed pack is shipped when the recipe wants a pool). */
    noPool: z.boolean().optional(),
    extraArgs: z.array(text(10_000)).max(100).optional(),
    importEnvironments: z.boolean().optional(),
  })
  .strict();
export type LaunchInput = z.infer<typeof launchSchema>;

export const attachSchema = z
  .object({
    name: text(200).min(1),
    backend: z.enum(['ray', 'slurm']),
    /** The Ray submission id (SPADE's `spade_games_8b_<pid>`) or the Slurm job id. */
    externalId: z.string().min(1).max(200).regex(/^[A-Za-z0-9_.-]+$/),
    ssh: sshTargetSchema.optional(),
    ray: z.object({ address: z.string().url().max(2048).optional(), tunnel: z.boolean().optional(), tokenSecret: envName.optional() }).strict().optional(),
    /** The run's folders on the job's machine, for charts from metrics.jsonl and environments flowing back. */
    outputs: z
      .object({ gamesDir: text(4096).optional(), cacheDir: text(4096).optional(), rejectedDir: text(4096).optional(), metricsFile: text(4096).optional() })
      .strict()
      .optional(),
    importEnvironments: z.boolean().optional(),
  })
  .strict();
export type AttachInput = z.infer<typeof attachSchema>;

export const jobSummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  backend: backendSchema,
  host: z.string().nullable(),
  recipe: z.string().nullable(),
  state: jobStateSchema,
  detail: z.string(),
  exitCode: z.number().int().nullable(),
  externalId: z.string().nullable(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  logSize: z.number().int(),
  command: z.array(z.string()),
  workdir: z.string(),
  env: z.record(z.string(), z.string()),
  secretEnv: z.array(z.string()),
  filesBack: z.number().int(),
  /** Runs through an SSH login (ssh, Slurm, tunnelled Ray): its connection can carry a model endpoint's requests. */
  ssh: z.boolean(),
  /** Started outside the workbench and followed by it (a Ray submission id, a Slurm job id): someone else's. */
  attached: z.boolean(),
  /** Whose an attached job is, as its engine said (Slurm's user, the Ray head it runs on); null for jobs launched here. */
  owner: z.string().nullable(),
});
export type JobSummary = z.infer<typeof jobSummarySchema>;

export const recipeSchema = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string(),
  backends: z.array(backendSchema),
  command: z.array(z.string()),
  env: z.record(z.string(), z.string()),
  requiredEnv: z.array(z.string()),
  optionalEnv: z.array(z.string()),
  secretEnv: z.array(z.string()),
  slurm: z
    .object({ gpus: z.number().optional(), gres: z.string().optional(), time: z.string().optional(), partition: z.string().optional(), cpusPerTask: z.number().optional(), mem: z.string().optional() })
    .optional(),
  /** The Ray head the recipe's script submits to (the outcome is that Ray job's status). */
  ray: z.object({ address: z.string() }).optional(),
  /** What to say before launching (a script that kills processes by name on a shared host, a key on a command line). */
  warnings: z.array(z.string()),
  /** Whether the script passes on extra arguments (SPADE's scripts mostly never read "$@"). */
  acceptsArgs: z.boolean(),
  /** Values a variable may take where the script refuses any other (per size: REWARD_VARIANT). */
  envValues: z.record(z.string(), z.array(z.string())),
  /** Variables the workbench sets itself and a launch may not change, with why. */
  fixedEnv: z.record(z.string(), z.string()),
  /** The SPADE script the recipe runs, when it runs one. */
  spadeScript: z.string().optional(),
});
export type JobRecipe = z.infer<typeof recipeSchema>;

const idInput = z.object({ id: z.string().min(1).max(64) }).strict();

/** A finite number, or null where SPADE printed nan/inf. */
const maybeNumber = z.number().nullable();
export const jobMetricsSchema = z.object({
  keys: z.array(z.string()),
  series: z.array(z.object({ key: z.string(), axis: z.string(), steps: z.array(z.number()), values: z.array(z.number()) })),
  /** `[REGRET] <game>.py: R(hint)=…, R(no_hint)=…, regret=…` lines of the job's log (spade/core/orchestrator.py:2051), by file name. */
  games: z.array(z.object({ game: z.string(), rHint: maybeNumber, rNoHint: maybeNumber, regret: maybeNumber })),
});
export type JobMetrics = z.infer<typeof jobMetricsSchema>;

const evalValue = z.union([z.number(), z.string(), z.boolean(), z.null()]);
/** A run's artefacts (core/jobs/artefactFormats.ts says where SPADE, Slime and Tinker write each). */
export const jobArtefactsSchema = z.object({
  /** The run's folder on the job's machine (OUTPUT_DIR), or null when the job names none. */
  runDir: z.string().nullable(),
  /** Why nothing could be read, when so. */
  note: z.string().nullable(),
  saveDirs: z.array(z.object({ path: z.string(), kind: z.enum(['megatron', 'tinker']), latest: z.number().nullable(), tracker: z.string().nullable(), checkpoints: z.number().int() })),
  checkpoints: z.array(
    z.object({
      kind: z.enum(['megatron', 'tinker']),
      /** The rollout id (Megatron's iteration) or Tinker's batch; null for a `release` folder. */
      step: z.number().nullable(),
      name: z.string(),
      path: z.string(),
      latest: z.boolean(),
      samplerPath: z.string().nullable(),
      mtime: z.number().nullable(),
    }),
  ),
  /** eval_offline's results.json files under the run's folder, by checkpoint step. */
  evals: z.array(
    z.object({
      path: z.string(),
      ckpt: z.string(),
      ckptResolved: z.string(),
      startedAt: z.string().nullable(),
      elapsedSec: z.number().nullable(),
      step: z.number().nullable(),
      suites: z.array(z.object({ name: z.string(), metrics: z.record(z.string(), evalValue), elapsedSec: z.number().nullable(), skipped: z.boolean(), error: z.string().nullable() })),
    }),
  ),
  /** Files that were found but not read, and why. */
  problems: z.array(z.object({ path: z.string(), message: z.string() })),
  /** The save folder "continue this run" would pass as LOAD_DIR, and its step; null when it cannot. */
  continuable: z.object({ loadDir: z.string(), step: z.number() }).nullable(),
  continueNote: z.string(),
});
export type JobArtefacts = z.infer<typeof jobArtefactsSchema>;

export const jobsCalls = {
  'jobs.list': defineCall({
    name: 'jobs.list',
    summary: 'Every job, newest first.',
    input: z.object({}).strict(),
    output: z.object({ jobs: z.array(jobSummarySchema) }),
  }),
  'jobs.get': defineCall({ name: 'jobs.get', summary: 'One job.', input: idInput, output: jobSummarySchema }),
  'jobs.recipes': defineCall({
    name: 'jobs.recipes',
    summary: 'Launch recipes from resources/jobs (SPADE launches and the example run).',
    input: z.object({}).strict(),
    output: z.object({ recipes: z.array(recipeSchema) }),
  }),
  'jobs.sshHosts': defineCall({
    name: 'jobs.sshHosts',
    summary: 'Host aliases from ~/.ssh/config.',
    input: z.object({}).strict(),
    output: z.object({ hosts: z.array(z.string()) }),
  }),
  'jobs.probeHost': defineCall({
    name: 'jobs.probeHost',
    summary: 'Connect once to check the host key: trusted, or unknown/changed with its fingerprint.',
    input: z.object({ ssh: sshTargetSchema }).strict(),
    output: z.object({
      status: z.enum(['trusted', 'unknown', 'changed']),
      host: z.string().optional(),
      port: z.number().int().optional(),
      keyType: z.string().optional(),
      fingerprint: z.string().optional(),
      message: z.string().optional(),
    }),
  }),
  'jobs.trustHost': defineCall({
    name: 'jobs.trustHost',
    summary: 'Accept an unknown host key the user saw (by its fingerprint) into the workbench known_hosts.',
    input: z.object({ host: z.string().min(1).max(255), port: z.number().int().min(1).max(65535), fingerprint: z.string().regex(/^SHA256:[A-Za-z0-9+/]{43}$/) }).strict(),
    output: z.object({ trusted: z.boolean() }),
  }),
  'jobs.submit': defineCall({ name: 'jobs.submit', summary: 'Launch a job.', input: launchSchema, output: jobSummarySchema }),
  'jobs.attach': defineCall({
    name: 'jobs.attach',
    summary: 'Follow a job the workbench did not launch: a Ray job by submission id, a Slurm job by id (logs, metrics, outputs when their folders are given).',
    input: attachSchema,
    output: jobSummarySchema,
  }),
  'jobs.watch': defineCall({
    name: 'jobs.watch',
    summary: 'The job page is open: follow this job at the fast pace for the next minute (Slurm jobs are otherwise polled every 15-60 s).',
    input: idInput,
    output: z.object({ watching: z.boolean() }),
  }),
  'jobs.stop': defineCall({
    name: 'jobs.stop',
    summary: "Stop (cancel) a job and say what its engine answered. A job the workbench did not launch (attached) needs confirmAttached: it is someone's.",
    input: z.object({ id: z.string().min(1).max(64), confirmAttached: z.boolean().optional() }).strict(),
    output: jobSummarySchema.extend({ stopAnswer: z.string() }),
  }),
  'jobs.remove': defineCall({ name: 'jobs.remove', summary: 'Forget a finished job (its metrics and log mirror).', input: idInput, output: z.object({ removed: z.boolean() }) }),
  'jobs.log': defineCall({
    name: 'jobs.log',
    summary: 'Whole lines of the mirrored log from a byte offset.',
    input: z.object({ id: z.string().min(1).max(64), offset: z.number().int().min(0), maxBytes: z.number().int().min(1).max(16 * 1024 * 1024).optional() }).strict(),
    output: z.object({ text: z.string(), nextOffset: z.number().int(), size: z.number().int() }),
  }),
  'jobs.metrics': defineCall({
    name: 'jobs.metrics',
    summary: "One job's metric series, each on its own x axis (rollout/step, train/step, eval/step, step), and the games' returns its log named.",
    input: z.object({ id: z.string().min(1).max(64), keys: z.array(z.string().max(300)).max(200).optional() }).strict(),
    output: jobMetricsSchema,
  }),
  'jobs.artefacts': defineCall({
    name: 'jobs.artefacts',
    summary: "A run's checkpoints (Megatron iter_ folders, Tinker's checkpoints.jsonl) and SPADE's offline evaluations (eval_offline's results.json), read from its folder over the job's own connection.",
    input: idInput,
    output: jobArtefactsSchema,
  }),
  'jobs.continue': defineCall({
    name: 'jobs.continue',
    summary: "Launch a finished run's recipe again with LOAD_DIR set to its save folder (only where the recipe's script reads LOAD_DIR): a new job.",
    input: z.object({ id: z.string().min(1).max(64), loadDir: text(4096).optional() }).strict(),
    output: jobSummarySchema,
  }),
  'jobs.secrets': defineCall({
    name: 'jobs.secrets',
    summary: 'Names of the secrets held for this session (never their values), and where they are kept.',
    input: z.object({}).strict(),
    output: z.object({ names: z.array(z.string()), store: z.enum(['memory', 'keychain']) }),
  }),
  'jobs.setSecret': defineCall({
    name: 'jobs.setSecret',
    summary: 'Keep a secret (API key) for jobs: in memory (web) or the OS keychain (desktop). An empty value deletes it.',
    input: z.object({ name: envName, value: z.string().max(10_000).refine((v) => !/[\r\n\0]/.test(v), 'a single line') }).strict(),
    output: z.object({ names: z.array(z.string()), store: z.enum(['memory', 'keychain']) }),
  }),
} as const;

export const jobsEvents = {
  'jobs.changed': defineEvent({ name: 'jobs.changed', summary: 'A job was created or changed state.', payload: jobSummarySchema }),
  'jobs.logGrew': defineEvent({
    name: 'jobs.logGrew',
    summary: 'New whole lines were mirrored into a job log (read them with jobs.log).',
    payload: z.object({ id: z.string(), size: z.number().int() }),
  }),
} as const;
