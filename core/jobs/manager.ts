import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Db } from '../memory/db';
import { LocalBackend } from './backends/local';
import { RayBackend, rayTunnelTarget } from './backends/ray';
import { SlurmBackend } from './backends/slurm';
import { SshBackend } from './backends/ssh';
import { flowBack, type EnvironmentImporter } from './flowback';
import { completeLines, LogMirror } from './logMirror';
import { redact } from '../base/redact';
import { parseLogText } from './metrics';
import { attachRunReturns } from '../memory/runStats';
import { jobPaths, machineHome, outputPath } from './script';
import type { SecretStore } from './secrets';
import { appendKnownHost } from './ssh/knownHosts';
import { HostKeyError, SshConnection } from './ssh/connection';
import { assertEnvName } from './shell';
import { JobStore } from './store';
import { isTerminal, type BackendKind, type JobBackend, type JobRecord, type JobSpec, type SshTarget, type StatusReport, type Transport } from './types';
import { DomainError, isUnreachable } from '../errors';
import { GpuWatcher } from './gpu/watcher';
import { errorMessage } from '../api';

/** A shell job whose script submits to a Ray head (SPADE's launch scripts): spec.ray names that head. */
export function submitsToRay(job: JobRecord): boolean {
  return job.backend !== 'ray' && Boolean(job.spec.ray?.address);
}

/** The Ray job a launch script submitted, as the Ray backend sees it: reached through the job's SSH host unless local. */
function rayView(job: JobRecord, submissionId: string, headHost: string | null = null): JobRecord {
  let address = job.spec.ray?.address;
  if (headHost && address) {
    // The script's head listens on the node it runs on: the loopback address the recipe names is that node's.
    const u = new URL(address);
    if (['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) {
      u.hostname = headHost;
      address = u.href.replace(/\/$/, '');
    }
  }
  return { ...job, backend: 'ray', externalId: submissionId, spec: { ...job.spec, backend: 'ray', ray: { ...job.spec.ray, address, tunnel: job.backend !== 'local' } } };
}

/** Whose an attached job is, as its engine said when the workbench attached (older records: by its id). */
export function attachedOwner(job: JobRecord): string {
  if (job.spec.owner) return job.spec.owner;
  return `${job.backend === 'slurm' ? 'Slurm' : 'Ray'} job ${job.externalId ?? '?'}${job.host ? ` on ${job.host}` : ''}, started outside this workbench`;
}

/** `ray job submit` says "Job 'X' submitted successfully"; SPADE's scripts under `set -x` also trace RAY_JOB_ID=X. */
export function submissionIdIn(text: string): string | null {
  const m = /Job '([A-Za-z0-9_.:-]{1,200})' submitted successfully/.exec(text) ?? /^\+ RAY_JOB_ID=([A-Za-z0-9_.:-]{1,200})$/m.exec(text);
  return m ? m[1]! : null;
}

export interface JobManagerOptions {
  db: Db;
  dataDir: string;
  secrets: SecretStore;
  importer?: EnvironmentImporter | null;
  /** Told when a job changes or its log grows (the contract events). */
  onChange?: (job: JobRecord) => void;
  onLog?: (jobId: string, size: number) => void;
  onError?: (message: string) => void;
  pollMs?: number;
  sshConfigText?: string;
  /**
   * Slurm jobs are polled with back-off between these bounds (default 15-60 s) while nothing
   * changes, and every `pollMs` only while someone has the job open (`watch`).
   */
  slurmPollMs?: { min: number; max: number };
  /** nvidia-smi's `-l N` (and Ray's node stats) interval for the GPU panel, seconds (default 5). */
  gpuIntervalS?: number;
  /** Replaces backends (tests that inject faults); the real ones are built otherwise. */
  backends?: Partial<Record<BackendKind, JobBackend>>;
}

const LOG_CHUNK = 1 << 20;
const LOG_FAILURES_BEFORE_GIVING_UP = 5;
const CLOSE_WAIT_MS = 30_000;

/**
 * Owns every job: submits through the backend, follows each unfinished job (state, log tail,
 * metrics, environments) on a timer, and on start re-attaches to what a previous session left
 * running. Followers survive dropped connections: an error is reported and the next poll
 * reconnects (with the SSH layer's back-off) and resumes from the stored offsets.
 */
export class JobManager {
  readonly store: JobStore;
  private readonly backends: Record<BackendKind, JobBackend>;
  private readonly ssh = new Map<string, SshConnection>();
  private readonly followers = new Map<string, NodeJS.Timeout>();
  /** The poll in flight for each job: a second caller awaits it instead of starting another. */
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Jobs being stopped, with what the stop ended (said in the job's detail). */
  private readonly stopping = new Map<string, string>();
  private readonly pendingHostKeys = new Map<string, Buffer>();
  private readonly pollCount = new Map<string, number>();
  private readonly ticks = new Map<string, () => Promise<void>>();
  private readonly backoff = new Map<string, number>();
  private readonly logFailures = new Map<string, number>();
  private readonly headHosts = new Map<string, string | null>();
  private readonly rayFailures = new Map<string, number>();
  private readonly watched = new Map<string, number>();
  private closed = false;
  readonly appKnownHosts: string;
  /** GPU use of each running job's nodes (core/jobs/gpu), told of every poll. */
  readonly gpu: GpuWatcher;

  constructor(private readonly o: JobManagerOptions) {
    this.store = new JobStore(o.db);
    this.appKnownHosts = join(o.dataDir, 'ssh', 'known_hosts');
    const transportFor = (job: JobRecord): Promise<Transport> => Promise.resolve(this.connection(this.sshTarget(job)));
    this.backends = {
      local: new LocalBackend(),
      ssh: new SshBackend(transportFor),
      slurm: new SlurmBackend(transportFor),
      ray: new RayBackend({
        tunnel: async (job) => {
          const to = rayTunnelTarget(job.spec.ray?.address);
          return this.connection(this.sshTarget(job)).forward(to.host, to.port);
        },
        files: transportFor,
        secret: (n) => o.secrets.get(n),
      }),
      ...o.backends,
    };
    const ray = this.backends.ray as JobBackend & { get?: RayBackend['get'] };
    this.gpu = new GpuWatcher({ db: o.db, intervalS: o.gpuIntervalS, transport: (job) => this.backends[job.backend].files(job), rayGet: ray.get?.bind(ray), redact: (t) => redact(t, o.secrets.values()), onError: o.onError });
  }

  private sshTarget(job: JobRecord): SshTarget {
    if (!job.spec.ssh) throw new DomainError('invalid_input', `Job ${job.name} has no SSH host`);
    return job.spec.ssh;
  }

  connection(t: SshTarget): SshConnection {
    const key = JSON.stringify([t.host, t.port ?? null, t.user ?? null, t.identityFile ?? null, t.knownHostsFile ?? null]);
    let c = this.ssh.get(key);
    if (!c) {
      c = new SshConnection(t, { appKnownHosts: this.appKnownHosts, ...(this.o.sshConfigText !== undefined ? { configText: this.o.sshConfigText } : {}) });
      this.ssh.set(key, c);
    }
    return c;
  }

  /**
   * The SSH connection of a job (the one its follower uses) as a carrier for a model endpoint that
   * the job's SSH host can reach, e.g. a server the job started on a cluster node.
   */
  tunnelFor(jobId: string): ReturnType<SshConnection['forwarder']> {
    const job = this.get(jobId);
    if (!job.spec.ssh) throw new DomainError('invalid_input', `Job ${job.name} (${job.id}) has no SSH host, so it cannot carry an endpoint's traffic: choose a job run over SSH`);
    return this.connection(job.spec.ssh).forwarder(`job ${job.name}`);
  }

  /**
   * What a backend threw, with every session secret's value taken out of its message and stack: a
   * remote's answer (stderr, an HTTP body) may echo the environment it was given. The same object is
   * rethrown so its class and contract code (HostKeyError, DomainError) are kept.
   */
  private redacted(e: unknown): unknown {
    if (!(e instanceof Error) || (isUnreachable(e) && !(e instanceof DomainError))) return new DomainError('unavailable', redact(errorMessage(e), this.o.secrets.values()));
    e.message = redact(e.message, this.o.secrets.values());
    if (e.stack) e.stack = redact(e.stack, this.o.secrets.values());
    return e;
  }

  /** Connects once to learn the host key; an unknown key comes back with its fingerprint. */
  async probeHost(t: SshTarget): Promise<{ status: 'trusted' } | { status: 'unknown' | 'changed'; host: string; port: number; keyType: string; fingerprint: string; message: string }> {
    try {
      await this.connection(t).exec('true');
      return { status: 'trusted' };
    } catch (e) {
      if (e instanceof HostKeyError) {
        if (e.kind === 'unknown') this.pendingHostKeys.set(`${e.host}:${e.port}:${e.fingerprint}`, e.key);
        return { status: e.kind, host: e.host, port: e.port, keyType: e.keyType, fingerprint: e.fingerprint, message: e.message };
      }
      throw this.redacted(e);
    }
  }

  /** The user accepted an unknown key: only the exact key they saw (by fingerprint) is added. */
  trustHostKey(host: string, port: number, fingerprint: string): void {
    const key = this.pendingHostKeys.get(`${host}:${port}:${fingerprint}`);
    if (!key) throw new DomainError('not_found', `No pending host key ${fingerprint} for ${host}:${port}; connect first to see it`);
    appendKnownHost(this.appKnownHosts, host, port, key);
    this.pendingHostKeys.delete(`${host}:${port}:${fingerprint}`);
  }

  noteHostKeyError(e: HostKeyError): void {
    if (e.kind === 'unknown') this.pendingHostKeys.set(`${e.host}:${e.port}:${e.fingerprint}`, e.key);
  }

  /** Re-attach to every job a previous session left unfinished. */
  start(): void {
    for (const job of this.store.list()) {
      if (!isTerminal(job.state) && job.state !== 'submitting') this.follow(job.id);
      else if (job.state === 'submitting') this.store.update(job.id, { state: 'lost', detail: 'the app stopped while this job was being submitted' });
    }
  }

  list(): JobRecord[] {
    return this.store.list();
  }

  get(id: string): JobRecord {
    const j = this.store.get(id);
    if (!j) throw new DomainError('not_found', `No job ${id}`);
    return j;
  }

  mirror(job: JobRecord): LogMirror {
    return new LogMirror(join(this.o.dataDir, 'jobs', job.id, 'log.txt'));
  }

  private newRecord(spec: JobSpec): JobRecord {
    const now = new Date().toISOString();
    const id = `j${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
    return {
      id,
      name: spec.name,
      backend: spec.backend,
      host: spec.ssh ? `${spec.ssh.user ? `${spec.ssh.user}@` : ''}${spec.ssh.host}${spec.ssh.port ? `:${spec.ssh.port}` : ''}` : spec.ray?.address ?? null,
      recipe: spec.recipe ?? null,
      spec,
      externalId: null,
      state: 'submitting',
      detail: '',
      exitCode: null,
      remoteLog: null,
      logOffset: 0,
      localLogSize: 0,
      metricsOffset: 0,
      createdAt: now,
      startedAt: null,
      finishedAt: null,
      updatedAt: now,
    };
  }

  async submit(spec: JobSpec): Promise<JobRecord> {
    for (const k of Object.keys(spec.env)) assertEnvName(k);
    for (const k of spec.secretEnv) assertEnvName(k);
    const secrets: Record<string, string> = {};
    for (const n of spec.secretEnv) {
      const v = this.o.secrets.get(n);
      if (v === undefined) throw new DomainError('invalid_input', `Secret ${n} is not set for this session`);
      secrets[n] = v;
    }
    const job = this.newRecord(spec);
    const id = job.id;
    this.store.insert(job);
    try {
      const r = await this.backends[spec.backend].submit(job, secrets);
      this.store.update(id, {
        externalId: r.externalId,
        remoteLog: r.remoteLog,
        state: r.state ?? 'pending',
        detail: r.detail ?? '',
        startedAt: new Date().toISOString(),
      });
    } catch (e) {
      if (e instanceof HostKeyError) this.noteHostKeyError(e);
      const msg = redact(errorMessage(e), this.o.secrets.values());
      this.store.update(id, { state: 'failed', detail: `submit failed: ${msg}`, finishedAt: new Date().toISOString() });
      this.changed(id);
      throw this.redacted(e);
    }
    this.changed(id);
    this.follow(id);
    return this.get(id);
  }

  /**
   * Follows a job the workbench did not launch (SPADE's own `spade_games_8b_<pid>` on a Ray head, a
   * Slurm job id): logs, metrics and, when its output folders are given, environments.
   */
  async attach(req: {
    name: string;
    backend: BackendKind;
    externalId: string;
    ssh?: SshTarget | undefined;
    ray?: JobSpec['ray'];
    outputs?: JobSpec['outputs'] | undefined;
    workdir?: string | undefined;
    importEnvironments?: boolean | undefined;
  }): Promise<JobRecord> {
    const backend = this.backends[req.backend];
    if (!backend.attach) throw new DomainError('invalid_input', `Attaching is for Ray and Slurm jobs, not ${req.backend}`);
    if (req.backend !== 'ray' && !req.ssh) throw new DomainError('invalid_input', `Attaching to a ${req.backend} job needs its SSH host`);
    const spec: JobSpec = {
      name: req.name,
      backend: req.backend,
      command: [],
      workdir: req.workdir ?? '~',
      env: {},
      secretEnv: [],
      ssh: req.ssh,
      ray: req.ray,
      outputs: req.outputs ?? {},
      ship: [],
      importEnvironments: req.importEnvironments ?? Boolean(req.outputs && Object.values(req.outputs).some(Boolean)),
      attached: true,
    };
    const job = this.newRecord(spec);
    job.externalId = req.externalId;
    let found: Awaited<ReturnType<NonNullable<typeof backend.attach>>>;
    try {
      found = await backend.attach(job);
    } catch (e) {
      throw this.redacted(e);
    }
    if (found.owner) job.spec.owner = found.owner;
    this.store.insert({ ...job, externalId: found.externalId, remoteLog: found.remoteLog, state: found.state ?? 'pending', detail: `attached; ${found.detail ?? ''}`, startedAt: job.createdAt });
    this.changed(job.id);
    this.follow(job.id);
    return this.get(job.id);
  }

  /**
   * Stops a job and says what its engine answered (`stopAnswer`, also in the job's detail). A job the
   * workbench did not launch (attached) is someone's: it is stopped only with `confirmAttached`.
   */
  async stop(id: string, opts: { confirmAttached?: boolean } = {}): Promise<JobRecord & { stopAnswer: string }> {
    const job = this.get(id);
    if (isTerminal(job.state)) return { ...job, stopAnswer: `nothing was asked: the job had already ended (${job.state})` };
    if (job.spec.attached && !opts.confirmAttached) {
      throw new DomainError('conflict', `${attachedOwner(job)}. The workbench did not launch it: confirm to stop it.`, { attached: true, owner: attachedOwner(job) });
    }
    this.stopping.set(id, '');
    const said: string[] = [];
    const sub = job.spec.ray?.submissionId;
    if (submitsToRay(job) && sub) {
      // The Ray job first: its driver runs in a session of its own, which killing the script
      // would leave running on the GPUs.
      try {
        said.push(await this.backends.ray.stop(await this.rayJobOf(job, sub)));
      } catch (e) {
        said.push(`ray job ${sub} could not be stopped: ${redact(errorMessage(e), this.o.secrets.values()).slice(0, 300)}`);
      }
    }
    // Said as it happens: the follower may see the end while the script is still being stopped.
    this.stopping.set(id, said.join('; '));
    try {
      said.push(await this.backends[job.backend].stop(job));
    } catch (e) {
      this.stopping.delete(id);
      if (isUnreachable(e) || e instanceof HostKeyError) throw this.redacted(e);
      const answer = redact(errorMessage(e), this.o.secrets.values()).slice(0, 600);
      throw new DomainError('conflict', `${job.backend === 'slurm' ? 'Slurm' : job.backend === 'ray' ? 'The Ray head' : job.host ?? 'The machine'} did not stop ${job.name}: ${answer}`, { answer });
    }
    this.stopping.set(id, said.join('; '));
    // A poll already in flight began before the stop: wait for it, then look again.
    await this.inFlight.get(id);
    await this.poll(id);
    const after = this.get(id);
    if (!isTerminal(after.state) && (job.backend === 'local' || job.backend === 'ssh')) {
      this.store.update(id, { state: 'cancelled', detail: `stopped by the user: ${said.join('; ')}`, finishedAt: new Date().toISOString() });
      this.stopping.delete(id);
    } else if (after.state === 'cancelled' && !after.detail.includes(said.join('; '))) {
      // The follower saw the end while the engine was still answering: the answer is the news.
      this.store.update(id, { detail: `stopped by the user: ${said.join('; ')}` });
    }
    this.changed(id);
    this.gpu.see(this.get(id));
    return { ...this.get(id), stopAnswer: said.join('; ') };
  }

  /** The Ray job a launch script submitted, reached where its head listens (asked once per job). */
  private async rayJobOf(job: JobRecord, sub: string): Promise<JobRecord> {
    let host = this.headHosts.get(job.id);
    if (host === undefined) {
      host = (await this.backends[job.backend].rayHeadHost?.(job)) ?? null;
      this.headHosts.set(job.id, host);
    }
    return rayView(job, sub, host);
  }

  /** The outcome of a launch script that submitted a Ray job: the Ray job's status once the script ended. */
  private async rayOutcome(job: JobRecord, script: StatusReport): Promise<StatusReport> {
    const sub = job.spec.ray?.submissionId;
    if (!isTerminal(script.state)) return sub ? { ...script, detail: `${script.detail}; submitted ray job ${sub}` } : script;
    if (!sub) return { ...script, detail: `${script.detail} (the script never said which Ray job it submitted: this is the script's own outcome)` };
    const unknown = (why: string): StatusReport => ({
      state: script.state === 'succeeded' ? 'lost' : script.state,
      detail: `the launch script ended (${script.detail}) but ${why}`,
      exitCode: script.exitCode ?? null,
    });
    let r: StatusReport;
    try {
      r = await this.backends.ray.status(await this.rayJobOf(job, sub));
    } catch (e) {
      // A link that drops at the end is asked again on the next rounds before the outcome is given up on.
      const fails = (this.rayFailures.get(job.id) ?? 0) + 1;
      this.rayFailures.set(job.id, fails);
      if (fails < LOG_FAILURES_BEFORE_GIVING_UP) throw e;
      return unknown(`the Ray head could not be asked about ray job ${sub}: ${redact(errorMessage(e), this.o.secrets.values()).slice(0, 300)}`);
    }
    this.rayFailures.delete(job.id);
    const detail = redact(r.detail, this.o.secrets.values());
    if (r.state === 'lost') return unknown(`the Ray head does not know ray job ${sub}`);
    if (isTerminal(r.state)) return { state: r.state, detail: `${detail}; launch script: ${script.detail}`, exitCode: r.exitCode ?? null };
    return { state: r.state, detail: `the launch script ended (${script.detail}); ${detail}`, exitCode: null };
  }

  /** Forgets a finished job here and, for Ray, also deletes its record on the cluster. */
  async remove(id: string): Promise<void> {
    const job = this.get(id);
    if (!isTerminal(job.state)) throw new DomainError('conflict', 'Stop the job before removing it');
    if (job.externalId) await this.backends[job.backend].remove?.(job);
    this.unfollow(id);
    this.gpu.forget(id);
    this.store.remove(id);
  }

  /** A job's files over its own connection (this machine, the SSH host, Slurm's submit host); null for a Ray head reached directly. */
  files(job: JobRecord): Promise<Transport | null> {
    return this.backends[job.backend].files(job);
  }

  readLog(id: string, offset: number, max: number): { text: string; nextOffset: number; size: number } {
    return this.mirror(this.get(id)).read(offset, max);
  }

  private changed(id: string): void {
    const j = this.store.get(id);
    if (j) this.o.onChange?.(j);
  }

  follow(id: string): void {
    if (this.followers.has(id) || this.closed) return;
    // Under the write lock: another process following this job may be between its append and its commit.
    this.store.withWriteLock(() => {
      const job = this.store.get(id);
      if (job) this.mirror(job).reconcile(job.localLogSize);
    });
    const tick = async (): Promise<void> => {
      if (this.closed) return;
      const before = this.store.get(id)?.updatedAt;
      await this.poll(id);
      const j = this.store.get(id);
      if (!j || isTerminal(j.state)) {
        this.followers.delete(id);
        this.backoff.delete(id);
        return;
      }
      this.followers.set(id, setTimeout(() => void tick(), this.nextDelay(j, j.updatedAt !== before)));
    };
    this.ticks.set(id, tick);
    this.followers.set(id, setTimeout(() => void tick(), 0));
  }

  /** How long until the next poll: a Slurm queue is asked rarely unless someone is looking. */
  private nextDelay(job: JobRecord, changed: boolean): number {
    const fast = this.o.pollMs ?? 1000;
    if (job.backend !== 'slurm') return fast;
    if ((this.watched.get(job.id) ?? 0) > Date.now()) return fast;
    const { min, max } = this.o.slurmPollMs ?? { min: 15_000, max: 60_000 };
    const next = changed ? min : Math.min(max, Math.max(min, (this.backoff.get(job.id) ?? min / 2) * 2));
    this.backoff.set(job.id, next);
    return next;
  }

  /** The job's page is open: poll it at the fast pace for the next minute, starting now. */
  watch(id: string): void {
    const job = this.get(id);
    // A job another process launched (the CLI) is followed here too from the moment it is looked at.
    if (!this.followers.has(id) && !isTerminal(job.state) && job.state !== 'submitting') this.follow(id);
    const wasWatched = (this.watched.get(id) ?? 0) > Date.now();
    this.watched.set(id, Date.now() + 60_000);
    const tick = this.ticks.get(id);
    if (!wasWatched && tick && this.followers.has(id) && !this.inFlight.has(id)) {
      clearTimeout(this.followers.get(id));
      this.followers.set(id, setTimeout(() => void tick(), 0));
    }
  }

  private unfollow(id: string): void {
    const t = this.followers.get(id);
    if (t) clearTimeout(t);
    this.followers.delete(id);
    this.ticks.delete(id);
  }

  /** One round for one job: state, log tail, metrics file, environments. Never throws. */
  poll(id: string): Promise<void> {
    const running = this.inFlight.get(id);
    if (running) return running;
    const p = this.pollOnce(id).finally(() => this.inFlight.delete(id));
    this.inFlight.set(id, p);
    return p;
  }

  private async pollOnce(id: string): Promise<void> {
    try {
      const job = this.store.get(id);
      if (!job || isTerminal(job.state)) return;
      const backend = this.backends[job.backend];
      const raw = await backend.status(job);
      let report: StatusReport = { ...raw, detail: redact(raw.detail, this.o.secrets.values()) };
      // Drain the log before declaring the end, so the last lines are never lost. A log that cannot
      // be read (a Ray head that fails to decode it) must not hold the state back: it is said instead.
      let logError: string | null = null;
      try {
        await this.tail(job, isTerminal(report.state));
        await this.tailMetricsFile(job, backend, isTerminal(report.state));
      } catch (e) {
        logError = redact(errorMessage(e), this.o.secrets.values());
        this.o.onError?.(`job ${id}: ${logError}`);
      }
      // A script that submits to Ray ends with `ray job logs --follow`, whose exit code says nothing:
      // the Ray job's own status is the outcome.
      if (submitsToRay(job)) report = await this.rayOutcome(this.store.get(id) ?? job, report);
      if (logError) {
        // A dropped link is retried (the end waits until the log is drained); a log that still
        // cannot be read after a few rounds past the end is given up on, and that is said.
        const fails = (this.logFailures.get(id) ?? 0) + 1;
        this.logFailures.set(id, fails);
        const giveUp = isTerminal(report.state) && fails >= LOG_FAILURES_BEFORE_GIVING_UP;
        report = giveUp
          ? { ...report, detail: `${report.detail}; the log could not be read to its end: ${logError.slice(0, 300)}` }
          : isTerminal(report.state)
            ? { state: job.state, detail: `reconnecting: ${logError.slice(0, 300)}`, exitCode: job.exitCode }
            : { ...report, detail: `reconnecting: ${logError.slice(0, 300)}` };
      } else this.logFailures.delete(id);
      let state = report.state;
      if (this.stopping.has(id) && (state === 'lost' || state === 'failed')) state = 'cancelled';
      const terminal = isTerminal(state);
      const n = (this.pollCount.get(id) ?? 0) + 1;
      this.pollCount.set(id, n);
      if (job.spec.importEnvironments && (terminal || n % 3 === 1)) await this.flowBack(job, backend, terminal);
      const stopNote = this.stopping.get(id);
      if (state !== job.state || report.detail !== job.detail || (report.exitCode ?? null) !== job.exitCode) {
        this.store.update(id, {
          state,
          detail: stopNote !== undefined && state === 'cancelled' ? `stopped by the user${stopNote ? `: ${stopNote}` : ''}; ${report.detail}` : report.detail,
          exitCode: report.exitCode ?? null,
          ...(terminal ? { finishedAt: new Date().toISOString() } : {}),
        });
        if (terminal) this.stopping.delete(id);
        this.changed(id);
      }
      this.gpu.see(this.store.get(id) ?? job);
    } catch (e) {
      const msg = redact(errorMessage(e), this.o.secrets.values());
      this.o.onError?.(`job ${id}: ${msg}`);
      const j = this.store.get(id);
      if (j && !j.detail.startsWith('reconnecting')) {
        this.store.update(id, { detail: `reconnecting: ${msg.slice(0, 300)}` });
        this.changed(id);
      }
    }
  }

  private async tail(first: JobRecord, final: boolean): Promise<void> {
    let job = first;
    const backend = this.backends[job.backend];
    const mirror = this.mirror(job);
    let offset = job.logOffset;
    let localSize = job.localLogSize;
    for (let rounds = 0; rounds < 64; rounds++) {
      const chunk = await backend.readLog({ ...job, logOffset: offset }, offset, LOG_CHUNK);
      if (!chunk || chunk.data.length === 0) break;
      const { take, consumed, addNewline } = completeLines(chunk.data, final && offset + chunk.data.length >= chunk.size, chunk.data.length >= LOG_CHUNK);
      if (consumed === 0) break;
      const text = redact(take.toString('utf8'), this.o.secrets.values()) + (addNewline ? '\n' : '');
      if (submitsToRay(job) && !job.spec.ray?.submissionId) {
        const sub = submissionIdIn(text);
        if (sub) {
          job = { ...job, spec: { ...job.spec, ray: { ...job.spec.ray, submissionId: sub } } };
          this.store.setSpec(job.id, job.spec);
        }
      }
      const parsed = parseLogText(text);
      const size = this.store.claimLog(job.id, offset, offset + consumed, () => mirror.append(Buffer.from(text, 'utf8')), parsed.points, parsed.games);
      if (size === null) break; // another process following this job took these bytes
      localSize = size;
      offset += consumed;
      // A [REGRET] line for a game already back in the library attaches at once; later games get theirs on import.
      if (parsed.games.length && job.spec.importEnvironments && attachRunReturns(this.o.db, job.id) > 0) this.changed(job.id);
      this.o.onLog?.(job.id, localSize);
      if (offset >= chunk.size) break;
    }
  }

  private async tailMetricsFile(job: JobRecord, backend: JobBackend, final: boolean): Promise<void> {
    const t = await backend.files(job);
    if (!t || !job.spec.outputs.metricsFile) return;
    const path = outputPath(job.spec.outputs.metricsFile, jobPaths(job, await machineHome(t)));
    if (!path) return;
    const fresh = this.store.get(job.id)!;
    const chunk = await t.readChunk(path, fresh.metricsOffset, LOG_CHUNK);
    if (!chunk || chunk.data.length === 0) return;
    const { take, consumed } = completeLines(chunk.data, final, chunk.data.length >= LOG_CHUNK);
    if (consumed === 0) return;
    this.store.commitMetricsFile(job.id, fresh.metricsOffset + consumed, parseLogText(take.toString('utf8')).points);
  }

  private async flowBack(job: JobRecord, backend: JobBackend, final: boolean): Promise<void> {
    const t = await backend.files(job);
    if (!t) return;
    const paths = jobPaths(job, await machineHome(t));
    const r = await flowBack(
      job,
      t,
      {
        gamesDir: outputPath(job.spec.outputs.gamesDir, paths),
        cacheDir: outputPath(job.spec.outputs.cacheDir, paths),
        rejectedDir: outputPath(job.spec.outputs.rejectedDir, paths),
      },
      this.store,
      join(this.o.dataDir, 'jobs', job.id, 'outputs'),
      this.o.importer ?? null,
      final,
    );
    if (r.fetched > 0) this.changed(job.id);
  }

  /** Tests and the UI's "reconnect" use this to cut a host's link as a network drop would. */
  dropConnections(): void {
    for (const c of this.ssh.values()) c.drop();
  }

  /** Stops following (jobs keep running where they run) and waits for a poll in flight. */
  async close(): Promise<void> {
    this.closed = true;
    for (const id of [...this.followers.keys()]) this.unfollow(id);
    await this.gpu.close();
    // Every operation on a lost SSH link fails at once, so a poll ends; a remote command that
    // never answers on a live link must still not keep the app from quitting.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.inFlight.values()]),
      new Promise<void>((r) => (timer = setTimeout(() => {
        if (this.inFlight.size > 0) this.o.onError?.(`closing with ${this.inFlight.size} job poll(s) still waiting for their host`);
        r();
      }, CLOSE_WAIT_MS))),
    ]);
    clearTimeout(timer);
    for (const b of Object.values(this.backends)) b.close?.();
    for (const c of this.ssh.values()) c.close();
    this.ssh.clear();
  }
}
