import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import { absolute } from '../script';
import { shJoin, shQuote, assertEnvName } from '../shell';
import type { JobBackend, JobRecord, JobState, LogChunk, StatusReport, SubmitResult, Transport } from '../types';

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
}

interface Reply {
  status: number;
  body: string;
}

/** The Ray Jobs REST API (the dashboard on port 8265), reached directly or through an SSH tunnel. */
export class RayBackend implements JobBackend {
  readonly kind = 'ray' as const;
  constructor(private readonly deps: RayDeps) {}

  private async call(job: JobRecord, method: string, path: string, body?: unknown): Promise<Reply> {
    const ray = job.spec.ray ?? {};
    const tunnel = ray.tunnel && this.deps.tunnel ? await this.deps.tunnel(job) : null;
    const base = new URL(tunnel ? 'http://127.0.0.1:8265' : (ray.address ?? 'http://127.0.0.1:8265'));
    const token = ray.tokenSecret ? this.deps.secret(ray.tokenSecret) : undefined;
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
      ...(tunnel ? { createConnection: () => tunnel as never, agent: false } : {}),
    };
    const req = base.protocol === 'https:' && !tunnel ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const r = req(opts, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8') }));
        res.on('error', reject);
      });
      r.on('timeout', () => r.destroy(new Error(`Ray API ${method} ${path} timed out`)));
      r.on('error', reject);
      r.end(payload);
    });
  }

  private async json(job: JobRecord, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    const r = await this.call(job, method, path, body);
    if (r.status < 200 || r.status >= 300) throw new Error(`Ray API ${method} ${path}: HTTP ${r.status} ${r.body.slice(0, 300)}`);
    try {
      return JSON.parse(r.body) as Record<string, unknown>;
    } catch {
      throw new Error(`Ray API ${method} ${path} returned something that is not JSON`);
    }
  }

  async submit(job: JobRecord, secrets: Record<string, string>): Promise<SubmitResult> {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(job.spec.env)) {
      assertEnvName(k);
      env[k] = v;
    }
    for (const [k, v] of Object.entries(secrets)) env[k] = v;
    const workdir = absolute(job.spec.workdir || '~', '~');
    // Ray runs the entrypoint through a shell: every piece is quoted, the workdir too.
    const cd = workdir.startsWith('~') ? `cd "$HOME"${workdir.length > 1 ? `/${shQuote(workdir.slice(2))}` : ''}` : `cd ${shQuote(workdir)}`;
    const submissionId = job.spec.ray?.submissionId || `spade_wb_${job.id.replace(/[^A-Za-z0-9_]/g, '_')}`;
    const out = await this.json(job, 'POST', '/api/jobs/', {
      entrypoint: `${cd} && ${shJoin(job.spec.command)}`,
      submission_id: submissionId,
      runtime_env: { env_vars: env },
      metadata: { spade_workbench_job: job.id, name: job.name.slice(0, 200) },
    });
    const id = String(out.submission_id ?? out.job_id ?? submissionId);
    return { externalId: id, remoteLog: null, state: 'pending', detail: `ray job ${id}` };
  }

  async status(job: JobRecord): Promise<StatusReport> {
    const id = encodeURIComponent(job.externalId ?? '');
    const r = await this.call(job, 'GET', `/api/jobs/${id}`);
    if (r.status === 404) return { state: 'lost', detail: `ray job ${job.externalId} is not known to the cluster` };
    if (r.status < 200 || r.status >= 300) throw new Error(`Ray API status: HTTP ${r.status}`);
    const info = JSON.parse(r.body) as { status?: string; message?: string; driver_exit_code?: number | null };
    const raw = String(info.status ?? 'PENDING');
    return {
      state: RAY_STATES[raw] ?? 'running',
      detail: `ray job ${job.externalId}: ${raw}${info.message ? ` (${info.message})` : ''}`,
      exitCode: typeof info.driver_exit_code === 'number' ? info.driver_exit_code : null,
    };
  }

  /** Ray returns the whole log; the byte offset picks up where the mirror stopped. */
  async readLog(job: JobRecord, offset: number, max: number): Promise<LogChunk | null> {
    const id = encodeURIComponent(job.externalId ?? '');
    const out = await this.json(job, 'GET', `/api/jobs/${id}/logs`);
    const all = Buffer.from(String(out.logs ?? ''), 'utf8');
    return { data: all.subarray(offset, offset + max), size: all.length };
  }

  async stop(job: JobRecord): Promise<void> {
    const id = encodeURIComponent(job.externalId ?? '');
    await this.json(job, 'POST', `/api/jobs/${id}/stop`);
  }

  async remove(job: JobRecord): Promise<void> {
    const id = encodeURIComponent(job.externalId ?? '');
    const r = await this.call(job, 'DELETE', `/api/jobs/${id}`);
    if (r.status >= 400 && r.status !== 404) throw new Error(`Ray API DELETE: HTTP ${r.status} ${r.body.slice(0, 200)}`);
  }

  async files(job: JobRecord): Promise<Transport | null> {
    return job.spec.ray?.tunnel && this.deps.files ? this.deps.files(job) : null;
  }
}
