import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import WebSocket from 'ws';
import { LocalTransport } from '../localTransport';
import { absolute, expand, jobPaths, machineHome, ship, type JobPaths } from '../script';
import { exportLines, shJoin, shQuote, assertEnvName } from '../shell';
import { isTerminal, type JobBackend, type JobRecord, type JobState, type LogChunk, type StatusReport, type SubmitResult, type Transport } from '../types';
import { RayLogTail } from './rayTail';
import { DomainError } from '../../errors';

const DEFAULT_RAY_ADDRESS = 'http://127.0.0.1:8265';

/**
 * Where an SSH tunnel for Ray leads, as the SSH host sees it: the job's Ray address when given
 * (a dashboard on another port or on another node of the head's network), else its 127.0.0.1:8265.
 */
export function rayTunnelTarget(address: string | undefined): { host: string; port: number } {
  const u = new URL(address ?? DEFAULT_RAY_ADDRESS);
  return { host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(u.port) || 8265 };
}

export const RAY_STATES: Record<string, JobState> = {
  PENDING: 'pending',
  RUNNING: 'running',
  STOPPED: 'cancelled',
  SUCCEEDED: 'succeeded',
  FAILED: 'failed',
};

export interface RayDeps {
  /** A stream to the head node's 127.0.0.1:8265 through SSH, for tunnelled jobs. */
  tunnel?: (job: JobRecord) => Promise<Duplex>;
  /** SFTP to the head node, for reading the run's outputs (tunnelled jobs only). */
  files?: (job: JobRecord) => Promise<Transport>;
  secret: (name: string) => string | undefined;
  /** Follow running jobs over the `/logs/tail` WebSocket (default); false keeps plain polling. */
  liveTail?: boolean;
  /** How long a submit waits for a fresh head's job agent (default 60 s). */
  agentWaitMs?: number;
  /** How long stop() waits for the head to report the job ended (default 60 s). */
  stopWaitMs?: number;
}

interface Reply {
  status: number;
  body: string;
}

/**
 * The part of a Ray error body a person needs: the dashboard answers with a Python traceback
 * whose cause is on its last line, not in its first few hundred characters.
 */
export function rayErrorText(body: string): string {
  const lines = body.split('\n').map((l) => l.trim()).filter((l) => l && l !== '.');
  const last = lines[lines.length - 1] ?? '';
  const text = lines.length > 1 && /^Traceback/.test(lines[0]!) ? last : body.trim();
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

/** A fresh head answers this until its job agent is up; the submit is retried meanwhile. */
const AGENT_NOT_READY = /No available agent|agent.{0,40}not (?:yet )?(?:ready|available)/i;
const AGENT_WAIT_MS = 60_000;

function isLoopback(address: string | undefined): boolean {
  const h = new URL(address ?? DEFAULT_RAY_ADDRESS).hostname.replace(/^\[(.*)\]$/, '$1');
  return h === '127.0.0.1' || h === 'localhost' || h === '::1';
}

/** The Ray Jobs REST API (the dashboard on port 8265), reached directly or through an SSH tunnel. */
export class RayBackend implements JobBackend {
  readonly kind = 'ray' as const;
  readonly tail: RayLogTail;
  /** Jobs whose end status() has seen: their last reads go to GET /logs, the complete log. */
  private readonly ended = new Set<string>();
  constructor(private readonly deps: RayDeps) {
    this.tail = new RayLogTail({
      fetchLog: (job) => this.fetchLog(job),
      openSocket: (job) => this.openTail(job),
    });
  }

  /** The same base URL (or SSH tunnel) and token for REST calls and the tail socket. */
  private async endpoint(job: JobRecord): Promise<{ base: URL; token: string | undefined; tunnel: Duplex | null }> {
    const ray = job.spec.ray ?? {};
    const tunnel = ray.tunnel && this.deps.tunnel ? await this.deps.tunnel(job) : null;
    const base = new URL(ray.address ?? DEFAULT_RAY_ADDRESS);
    // Through the tunnel the dashboard is spoken to in plain HTTP, as on the head node itself.
    if (tunnel) base.protocol = 'http:';
    const token = ray.tokenSecret ? this.deps.secret(ray.tokenSecret) : undefined;
    return { base, token, tunnel };
  }

  private async openTail(job: JobRecord): Promise<WebSocket> {
    const { base, token, tunnel } = await this.endpoint(job);
    const url = new URL(base.href);
    url.protocol = base.protocol === 'https:' && !tunnel ? 'wss:' : 'ws:';
    url.pathname = `${base.pathname.replace(/\/$/, '')}/api/jobs/${encodeURIComponent(job.externalId ?? '')}/logs/tail`;
    return new WebSocket(url, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      handshakeTimeout: 15_000,
      perMessageDeflate: false,
      ...(tunnel ? { createConnection: () => tunnel as never } : {}),
    });
  }

  private async call(job: JobRecord, method: string, path: string, body?: unknown): Promise<Reply> {
    const { base, token, tunnel } = await this.endpoint(job);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const opts: RequestOptions = {
      method,
      host: base.hostname,
      port: base.port || (base.protocol === 'https:' ? 443 : 80),
      path: `${base.pathname.replace(/\/$/, '')}${path}`,
      headers: {
        accept: 'application/json',
        ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      timeout: 30_000,
      // No `agent` with createConnection: `agent: false` makes Node build an agent that connects directly.
      ...(tunnel ? { createConnection: () => tunnel as never } : {}),
    };
    const req = base.protocol === 'https:' && !tunnel ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const r = req(opts, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8') }));
        res.on('error', reject);
      });
      r.on('timeout', () => r.destroy(new DomainError('timeout', `Ray API ${method} ${path} timed out`)));
      r.on('error', reject);
      r.end(payload);
    });
  }

  /** GET a dashboard path (the node stats the GPU panel reads), through the job's tunnel when it has one. */
  get(job: JobRecord, path: string): Promise<Reply> {
    return this.call(job, 'GET', path);
  }

  private async json(job: JobRecord, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    const r = await this.call(job, method, path, body);
    if (r.status < 200 || r.status >= 300) throw new DomainError('unavailable', `Ray API ${method} ${path}: HTTP ${r.status} ${rayErrorText(r.body)}`);
    try {
      return JSON.parse(r.body) as Record<string, unknown>;
    } catch {
      throw new DomainError('unavailable', `Ray API ${method} ${path} returned something that is not JSON`);
    }
  }

  /**
   * Where secrets and `{{JOB_DIR}}` live for a Ray job: the head node's file system, over SFTP when
   * the dashboard is reached through SSH, or this machine's when the head is on loopback here.
   */
  private async headFiles(job: JobRecord): Promise<Transport | null> {
    if (job.spec.ray?.tunnel && this.deps.files) return this.deps.files(job);
    if (!job.spec.ssh && isLoopback(job.spec.ray?.address)) return new LocalTransport();
    return null;
  }

  async submit(job: JobRecord, secrets: Record<string, string>): Promise<SubmitResult> {
    const ray = job.spec.ray ?? {};
    const files = await this.headFiles(job);
    const home = files ? await machineHome(files) : null;
    const workdir = absolute(job.spec.workdir || '~', home ?? '~');
    const paths: JobPaths | null = home ? jobPaths(job, home) : workdir.startsWith('/') ? jobPaths(job, '/') : null;
    const fill = (v: string): string => {
      if (!/\{\{(JOB_DIR|WORKDIR)\}\}/.test(v)) return v;
      if (!paths) throw new DomainError('invalid_input', '{{JOB_DIR}} on Ray needs an absolute working directory or an SSH host to the head node');
      return expand(v, paths);
    };
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(job.spec.env)) {
      assertEnvName(k);
      env[k] = fill(v);
    }
    if (job.spec.ship.length > 0) {
      // A recipe's files (the example run, a pool) go into the job's folder on the head node.
      if (!files || !paths) throw new DomainError('invalid_input', 'Shipping files to a Ray job needs an SSH host to the head node (or a head on this machine)');
      await files.mkdirp(paths.jobDir);
      await ship(files, job.spec.ship, paths);
    }
    // Ray's cd runs through a shell: every piece is quoted, the workdir too.
    const cd = workdir.startsWith('~') ? `cd "$HOME"${workdir.length > 1 ? `/${shQuote(workdir.slice(2))}` : ''}` : `cd ${shQuote(workdir)}`;
    let prologue = '';
    let secretFile: string | null = null;
    if (Object.keys(secrets).length > 0) {
      // Ray returns runtime_env to anyone who can read its dashboard (GET /api/jobs/) and logs the
      // entrypoint, so secrets travel as a private file on the head node, read and removed at start.
      if (!files || !paths) {
        throw new DomainError('invalid_input', 'Secrets for a Ray job need an SSH host to the head node (or a head on this machine): Ray shows runtime_env to anyone who can read its dashboard');
      }
      await files.mkdirp(paths.jobDir);
      secretFile = `${paths.jobDir}/secrets.env`;
      await files.writeFile(secretFile, `${exportLines(secrets)}\n`, 0o600);
      prologue = `set -a && . ${shQuote(secretFile)} && set +a && rm -f ${shQuote(secretFile)} && `;
    }
    const submissionId = ray.submissionId || `spade_wb_${job.id.replace(/[^A-Za-z0-9_]/g, '_')}`;
    const body: Record<string, unknown> = {
      entrypoint: `${prologue}${cd} && ${shJoin(job.spec.command.map(fill))}`,
      submission_id: submissionId,
      runtime_env: { env_vars: env },
      metadata: { spade_workbench_job: job.id, name: job.name.slice(0, 200) },
    };
    if (ray.numCpus !== undefined) body.entrypoint_num_cpus = ray.numCpus;
    if (ray.numGpus !== undefined) body.entrypoint_num_gpus = ray.numGpus;
    if (ray.memory !== undefined) body.entrypoint_memory = ray.memory;
    if (ray.resources && Object.keys(ray.resources).length) body.entrypoint_resources = ray.resources;
    try {
      const out = await this.submitWhenReady(job, body);
      const id = String(out.submission_id ?? out.job_id ?? submissionId);
      return { externalId: id, remoteLog: null, state: 'pending', detail: `ray job ${id}` };
    } catch (e) {
      if (secretFile && files) await files.exec(`rm -f ${shQuote(secretFile)}`).catch(() => undefined);
      throw e;
    }
  }

  async attach(job: JobRecord): Promise<SubmitResult> {
    const s = await this.status(job);
    if (s.state === 'lost') throw new DomainError('not_found', `The Ray head does not know a job ${job.externalId}`);
    // Ray records no user for a job: say where it runs and what it runs, which is what Ray knows.
    const head = job.spec.ray?.tunnel && job.spec.ssh ? `${job.spec.ray?.address ?? DEFAULT_RAY_ADDRESS} through ${job.spec.ssh.host}` : job.spec.ray?.address ?? DEFAULT_RAY_ADDRESS;
    let entrypoint = '';
    try {
      const info = await this.json(job, 'GET', `/api/jobs/${encodeURIComponent(job.externalId ?? '')}`);
      if (typeof info.entrypoint === 'string') entrypoint = info.entrypoint.length > 120 ? `${info.entrypoint.slice(0, 120)}…` : info.entrypoint;
    } catch {
      // The status above already answered; the entrypoint only helps a person recognise the job.
    }
    const owner = `Ray job ${job.externalId} on the head at ${head}, submitted outside this workbench (Ray records no owner)${entrypoint ? `; it runs: ${entrypoint}` : ''}`;
    return { externalId: job.externalId!, remoteLog: null, state: s.state, detail: s.detail, owner };
  }

  /** POST /api/jobs/, retried while a fresh head says its job agent is not up yet. */
  private async submitWhenReady(job: JobRecord, body: unknown): Promise<Record<string, unknown>> {
    const end = Date.now() + (this.deps.agentWaitMs ?? AGENT_WAIT_MS);
    for (let wait = 500; ; wait = Math.min(wait * 2, 5000)) {
      const r = await this.call(job, 'POST', '/api/jobs/', body);
      if (r.status >= 200 && r.status < 300) return JSON.parse(r.body) as Record<string, unknown>;
      if (!(r.status >= 500 && AGENT_NOT_READY.test(r.body)) || Date.now() + wait > end) {
        throw new DomainError('unavailable', `Ray API POST /api/jobs/: HTTP ${r.status} ${rayErrorText(r.body)}`);
      }
      await new Promise((res) => setTimeout(res, wait));
    }
  }

  async status(job: JobRecord): Promise<StatusReport> {
    const id = encodeURIComponent(job.externalId ?? '');
    const r = await this.call(job, 'GET', `/api/jobs/${id}`);
    if (r.status === 404) {
      this.jobEnded(job);
      return { state: 'lost', detail: `ray job ${job.externalId} is not known to the cluster` };
    }
    if (r.status < 200 || r.status >= 300) throw new DomainError('unavailable', `Ray API status: HTTP ${r.status}`);
    const info = JSON.parse(r.body) as { status?: string; message?: string; driver_exit_code?: number | null };
    const raw = String(info.status ?? 'PENDING');
    const state = RAY_STATES[raw] ?? 'running';
    if (isTerminal(state)) this.jobEnded(job);
    return {
      state,
      // Ray's message ends with the last 20,000 characters of the log: its first line is the news.
      detail: `ray job ${job.externalId}: ${raw}${info.message ? ` (${info.message.split('\n')[0]!.replace(/, last available logs.*$/, '').slice(0, 300)})` : ''}`,
      exitCode: typeof info.driver_exit_code === 'number' ? info.driver_exit_code : null,
    };
  }

  private jobEnded(job: JobRecord): void {
    this.ended.add(job.id);
    this.tail.finish(job.id);
  }

  private async fetchLog(job: JobRecord): Promise<Buffer> {
    const id = encodeURIComponent(job.externalId ?? '');
    const out = await this.json(job, 'GET', `/api/jobs/${id}/logs`);
    return Buffer.from(String(out.logs ?? ''), 'utf8');
  }

  /**
   * While the job runs, bytes come from the `/logs/tail` socket; once status() has seen the end
   * (or without a tail) Ray's whole log is read and the byte offset picks up where the mirror stopped.
   */
  async readLog(job: JobRecord, offset: number, max: number): Promise<LogChunk | null> {
    if (this.deps.liveTail !== false && !this.ended.has(job.id)) return this.tail.read(job, offset, max);
    const all = await this.fetchLog(job);
    return { data: all.subarray(offset, offset + max), size: all.length };
  }

  /**
   * Asks the head to stop the job and waits until it says the job ended: on a real head STOPPED
   * comes seconds after the request (the supervisor signals the driver, then waits).
   */
  async stop(job: JobRecord): Promise<string> {
    const s = await this.stopAndWait(job);
    return `${s.detail}; Ray answered ${s.reply}`;
  }

  async stopAndWait(job: JobRecord): Promise<StatusReport & { reply: string }> {
    const id = encodeURIComponent(job.externalId ?? '');
    const r = await this.call(job, 'POST', `/api/jobs/${id}/stop`);
    const reply = `POST /api/jobs/${job.externalId}/stop with HTTP ${r.status} ${rayErrorText(r.body) || '(empty body)'}`;
    if (r.status < 200 || r.status >= 300) throw new DomainError('unavailable', `The Ray head refused: ${reply}`);
    const end = Date.now() + (this.deps.stopWaitMs ?? 60_000);
    for (;;) {
      const s = await this.status(job);
      if (isTerminal(s.state) || Date.now() > end) return { ...s, reply };
      await new Promise((res) => setTimeout(res, 500));
    }
  }

  async remove(job: JobRecord): Promise<void> {
    const id = encodeURIComponent(job.externalId ?? '');
    const r = await this.call(job, 'DELETE', `/api/jobs/${id}`);
    if (r.status >= 400 && r.status !== 404) throw new DomainError('unavailable', `Ray API DELETE: HTTP ${r.status} ${r.body.slice(0, 200)}`);
    this.tail.finish(job.id);
    this.ended.delete(job.id);
  }

  /** Closes every tail socket; the jobs keep running on the cluster. */
  close(): void {
    this.tail.close();
  }

  /** The head node's files (outputs to bring back): over the SSH host, or here when the head is on this machine. */
  files(job: JobRecord): Promise<Transport | null> {
    return this.headFiles(job);
  }
}
