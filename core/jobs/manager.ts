import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Db } from '../memory/db';
import { LocalBackend } from './backends/local';
import { RayBackend, rayTunnelTarget } from './backends/ray';
import { SlurmBackend } from './backends/slurm';
import { SshBackend } from './backends/ssh';
import type { EnvironmentImporter } from './flowback';
import { FollowedJob } from './followedJob';
import { LogMirror } from './logMirror';
import { redact } from '../base/redact';
import { submitsToRay } from './rayLaunch';
import type { SecretStore } from './secrets';
import { HostKeyError, type SshConnection } from './ssh/connection';
import { SshHosts, type HostProbe } from './sshHosts';
import { assertEnvName } from './shell';
import { JobStore } from './jobStore';
import { isTerminal, type BackendKind, type JobBackend, type JobRecord, type JobSpec, type SshTarget, type Transport } from './types';
import { DomainError, isUnreachable } from '../errors';
import { GpuWatcher } from './gpu/watcher';
import { errorMessage } from '../api';

// Kept importable from here, where they were first defined.
export { submissionIdIn, submitsToRay } from './rayLaunch';

/** Whose an attached job is, as its engine said when the workbench attached (older records: by its id). */
export function attachedOwner(job: JobRecord): string {
  if (job.spec.owner) return job.spec.owner;
  return `${job.backend === 'slurm' ? 'Slurm' : 'Ray'} job ${job.externalId ?? '?'}${job.host ? ` on ${job.host}` : ''}, started outside this workbench`;
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
  private readonly hosts: SshHosts;
  /** Every job followed or polled in this session, by id: its timer, poll in flight, stop, back-off and counts. */
  private readonly jobs = new Map<string, FollowedJob>();
  private closed = false;
  get appKnownHosts(): string {
    return this.hosts.appKnownHosts;
  }
  /** GPU use of each running job's nodes (core/jobs/gpu), told of every poll. */
  readonly gpu: GpuWatcher;

  constructor(private readonly o: JobManagerOptions) {
    this.store = new JobStore(o.db);
    this.hosts = new SshHosts(join(o.dataDir, 'ssh', 'known_hosts'), o.sshConfigText);
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
    return this.hosts.connection(t);
  }

  /** The per-job state of a job, made on first use. */
  private followed(id: string): FollowedJob {
    let f = this.jobs.get(id);
    if (!f) {
      const o = this.o;
      f = new FollowedJob(id, {
        store: this.store,
        backends: this.backends,
        gpu: this.gpu,
        db: o.db,
        dataDir: o.dataDir,
        secrets: o.secrets,
        importer: o.importer ?? null,
        pollMs: o.pollMs,
        slurmPollMs: o.slurmPollMs,
        onLog: (jobId, size) => o.onLog?.(jobId, size),
        onError: (message) => o.onError?.(message),
        mirror: (job) => this.mirror(job),
        changed: (jobId) => this.changed(jobId),
      });
      this.jobs.set(id, f);
    }
    return f;
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
  async probeHost(t: SshTarget): Promise<HostProbe> {
    try {
      return await this.hosts.probe(t);
    } catch (e) {
      throw this.redacted(e);
    }
  }

  /** The user accepted an unknown key: only the exact key they saw (by fingerprint) is added. */
  trustHostKey(host: string, port: number, fingerprint: string): void {
    this.hosts.trustHostKey(host, port, fingerprint);
  }

  noteHostKeyError(e: HostKeyError): void {
    this.hosts.noteHostKeyError(e);
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
    const f = this.followed(id);
    f.stopNote = '';
    const said: string[] = [];
    const sub = job.spec.ray?.submissionId;
    if (submitsToRay(job) && sub) {
      // The Ray job first: its driver runs in a session of its own, which killing the script
      // would leave running on the GPUs.
      try {
        said.push(await this.backends.ray.stop(await f.rayJobOf(job, sub)));
      } catch (e) {
        said.push(`ray job ${sub} could not be stopped: ${redact(errorMessage(e), this.o.secrets.values()).slice(0, 300)}`);
      }
    }
    // Said as it happens: the follower may see the end while the script is still being stopped.
    f.stopNote = said.join('; ');
    try {
      said.push(await this.backends[job.backend].stop(job));
    } catch (e) {
      f.stopNote = undefined;
      if (isUnreachable(e) || e instanceof HostKeyError) throw this.redacted(e);
      const answer = redact(errorMessage(e), this.o.secrets.values()).slice(0, 600);
      throw new DomainError('conflict', `${job.backend === 'slurm' ? 'Slurm' : job.backend === 'ray' ? 'The Ray head' : job.host ?? 'The machine'} did not stop ${job.name}: ${answer}`, { answer });
    }
    f.stopNote = said.join('; ');
    // A poll already in flight began before the stop: wait for it, then look again.
    await f.inFlight;
    await f.poll();
    const after = this.get(id);
    if (!isTerminal(after.state) && (job.backend === 'local' || job.backend === 'ssh')) {
      this.store.update(id, { state: 'cancelled', detail: `stopped by the user: ${said.join('; ')}`, finishedAt: new Date().toISOString() });
      f.stopNote = undefined;
    } else if (after.state === 'cancelled' && !after.detail.includes(said.join('; '))) {
      // The follower saw the end while the engine was still answering: the answer is the news.
      this.store.update(id, { detail: `stopped by the user: ${said.join('; ')}` });
    }
    this.changed(id);
    this.gpu.see(this.get(id));
    return { ...this.get(id), stopAnswer: said.join('; ') };
  }

  /** Forgets a finished job here and, for Ray, also deletes its record on the cluster. */
  async remove(id: string): Promise<void> {
    const job = this.get(id);
    if (!isTerminal(job.state)) throw new DomainError('conflict', 'Stop the job before removing it');
    if (job.externalId) await this.backends[job.backend].remove?.(job);
    this.unfollow(id);
    this.jobs.delete(id);
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
    const f = this.followed(id);
    if (f.following || this.closed) return;
    // Under the write lock: another process following this job may be between its append and its commit.
    this.store.withWriteLock(() => {
      const job = this.store.get(id);
      if (job) this.mirror(job).reconcile(job.localLogSize);
    });
    const tick = async (): Promise<void> => {
      if (this.closed) return;
      const before = this.store.get(id)?.updatedAt;
      await f.poll();
      const j = this.store.get(id);
      if (!j || isTerminal(j.state)) {
        f.ended();
        return;
      }
      f.timer = setTimeout(() => void tick(), f.nextDelay(j, j.updatedAt !== before));
    };
    f.tick = tick;
    f.timer = setTimeout(() => void tick(), 0);
  }

  /** The job's page is open: poll it at the fast pace for the next minute, starting now. */
  watch(id: string): void {
    const job = this.get(id);
    // A job another process launched (the CLI) is followed here too from the moment it is looked at.
    const f = this.followed(id);
    if (!f.following && !isTerminal(job.state) && job.state !== 'submitting') this.follow(id);
    const wasWatched = f.watched;
    f.watchedUntil = Date.now() + 60_000;
    const tick = f.tick;
    if (!wasWatched && tick && f.following && !f.inFlight) {
      clearTimeout(f.timer);
      f.timer = setTimeout(() => void tick(), 0);
    }
  }

  private unfollow(id: string): void {
    this.jobs.get(id)?.unfollow();
  }

  /** One round for one job: state, log tail, metrics file, environments. Never throws. */
  poll(id: string): Promise<void> {
    return this.followed(id).poll();
  }

  /** Tests and the UI's "reconnect" use this to cut a host's link as a network drop would. */
  dropConnections(): void {
    this.hosts.drop();
  }

  /** Stops following (jobs keep running where they run) and waits for a poll in flight. */
  async close(): Promise<void> {
    this.closed = true;
    for (const f of this.jobs.values()) if (f.following) f.unfollow();
    await this.gpu.close();
    // Every operation on a lost SSH link fails at once, so a poll ends; a remote command that
    // never answers on a live link must still not keep the app from quitting.
    const inFlight = () => [...this.jobs.values()].flatMap((f) => (f.inFlight ? [f.inFlight] : []));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(inFlight()),
      new Promise<void>((r) => (timer = setTimeout(() => {
        const waiting = inFlight().length;
        if (waiting > 0) this.o.onError?.(`closing with ${waiting} job poll(s) still waiting for their host`);
        r();
      }, CLOSE_WAIT_MS))),
    ]);
    clearTimeout(timer);
    for (const b of Object.values(this.backends)) b.close?.();
    this.hosts.close();
  }
}
