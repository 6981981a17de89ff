/** The one job model every backend (local, ssh, slurm, ray) speaks. */
export type BackendKind = 'local' | 'ssh' | 'slurm' | 'ray';
export type JobState = 'submitting' | 'pending' | 'running' | 'suspended' | 'succeeded' | 'failed' | 'cancelled' | 'timeout' | 'lost';

export const TERMINAL_STATES: ReadonlySet<JobState> = new Set(['succeeded', 'failed', 'cancelled', 'timeout', 'lost']);
export function isTerminal(s: JobState): boolean {
  return TERMINAL_STATES.has(s);
}

/** How to reach a host over SSH; `host` may be an alias from ~/.ssh/config. */
export interface SshTarget {
  host: string;
  port?: number | undefined;
  user?: string | undefined;
  identityFile?: string | undefined;
  /** Extra known_hosts file to trust besides ~/.ssh/known_hosts and the workbench's own. */
  knownHostsFile?: string | undefined;
}

export interface SlurmOptions {
  partition?: string | undefined;
  gpus?: number | undefined;
  /** `--gres` (e.g. gpu:a100:8) for clusters that count GPUs that way instead of `--gpus`. */
  gres?: string | undefined;
  time?: string | undefined;
  cpusPerTask?: number | undefined;
  mem?: string | undefined;
  container?: string | undefined;
}

export interface RayOptions {
  /** http(s)://host:8265 when reached directly; when tunnelled, the dashboard as the SSH host reaches it (plain HTTP). */
  address?: string | undefined;
  /** Reach the dashboard through an SSH tunnel to `ssh` (its 127.0.0.1:8265 unless `address` says otherwise). */
  tunnel?: boolean | undefined;
  submissionId?: string | undefined;
  /** Name of a secret that holds the bearer token (never the token itself). */
  tokenSecret?: string | undefined;
  /** What the entrypoint itself reserves (Ray's entrypoint_num_cpus/num_gpus/memory/resources). */
  numCpus?: number | undefined;
  numGpus?: number | undefined;
  /** Bytes. */
  memory?: number | undefined;
  resources?: Record<string, number> | undefined;
}

/** What the user launched; stored as JSON in jobs.spec. Holds no secret values. */
export interface JobSpec {
  name: string;
  backend: BackendKind;
  recipe?: string | undefined;
  /** argv, never a shell line: each element is quoted on its way to any shell. */
  command: string[];
  workdir: string;
  env: Record<string, string>;
  /** Names of variables whose values come from the secret store at submit time. */
  secretEnv: string[];
  ssh?: SshTarget | undefined;
  slurm?: SlurmOptions | undefined;
  /** The Ray backend's head; on a shell backend, the head the script submits to (its job's status is the outcome). */
  ray?: RayOptions | undefined;
  /** Where the run writes, relative to workdir unless absolute: games, cache, metrics. */
  outputs: { gamesDir?: string | undefined; cacheDir?: string | undefined; metricsFile?: string | undefined; rejectedDir?: string | undefined };
  /** Local files or folders uploaded into the workdir before launch (recipe scripts, a seed pool). */
  ship: { from: string; to: string }[];
  /** Import environments the run writes into memory. */
  importEnvironments: boolean;
  /** Lines given to the command on its standard input (a recipe's answers to a prompt); never secrets. */
  stdin?: string[] | undefined;
  /** Set when the workbench attached to a job it did not launch (a Ray submission id, a Slurm job id). */
  attached?: boolean | undefined;
  /** Whose an attached job is, as its engine says (Slurm's user, the Ray head it runs on): asked about before a stop. */
  owner?: string | undefined;
}

export interface JobRecord {
  id: string;
  name: string;
  backend: BackendKind;
  host: string | null;
  recipe: string | null;
  spec: JobSpec;
  externalId: string | null;
  state: JobState;
  detail: string;
  exitCode: number | null;
  remoteLog: string | null;
  logOffset: number;
  localLogSize: number;
  metricsOffset: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  updatedAt: string;
}

export interface StatusReport {
  state: JobState;
  detail: string;
  exitCode?: number | null;
}

export interface SubmitResult {
  externalId: string;
  remoteLog: string | null;
  state?: JobState;
  detail?: string;
  /** Attach only: whose the job is, in the engine's words. */
  owner?: string;
}

/** A chunk of a log read from a byte offset; `size` is the whole log's size when known. */
export interface LogChunk {
  data: Buffer;
  size: number;
}

export interface FileEntry {
  name: string;
  path: string;
  isDir: boolean;
  size: number;
  mtime: number;
}

/** Everything a backend and the environment flow-back need from the machine a job runs on. */
export interface Transport {
  readonly label: string;
  exec(command: string, opts?: { stdin?: string; signal?: AbortSignal }): Promise<{ code: number; stdout: string; stderr: string }>;
  readChunk(path: string, offset: number, max: number): Promise<LogChunk | null>;
  list(dir: string): Promise<FileEntry[] | null>;
  readFile(path: string): Promise<Buffer>;
  writeFile(path: string, data: Buffer | string, mode?: number): Promise<void>;
  mkdirp(dir: string): Promise<void>;
  close(): void;
}

export interface JobBackend {
  readonly kind: BackendKind;
  submit(job: JobRecord, secrets: Record<string, string>): Promise<SubmitResult>;
  status(job: JobRecord): Promise<StatusReport>;
  readLog(job: JobRecord, offset: number, max: number): Promise<LogChunk | null>;
  /**
   * Ends the job and says what the engine answered (scancel's exit and output, Ray's reply, the
   * signals sent), in words for the job's detail. Throws, with the engine's answer, when it refused.
   */
  stop(job: JobRecord): Promise<string>;
  /** The transport to read the job's files (outputs, metrics file), or null when none (ray). */
  files(job: JobRecord): Promise<Transport | null>;
  /** Finds a job this workbench did not submit, by the cluster's own id; throws if the cluster does not know it. */
  attach?(job: JobRecord): Promise<SubmitResult>;
  /**
   * Where a Ray head started by the job's script listens, when that is not the machine the workbench
   * reaches (a Slurm job runs on a compute node): its host name, or null for the job's own machine.
   */
  rayHeadHost?(job: JobRecord): Promise<string | null>;
  /** Deletes what the cluster keeps of a finished job (Ray's job record); absent where nothing is kept. */
  remove?(job: JobRecord): Promise<void>;
  /** Lets go of long-lived links (log sockets); the jobs keep running where they run. */
  close?(): void;
}
