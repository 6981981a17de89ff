import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { RayBackend } from '../jobs/backends/ray';
import { shQuote } from '../jobs/shell';
import { isTerminal, type JobRecord } from '../jobs/types';
import type { OnResult, SweepExecutor, SweepWork } from './executor';
import { LineReader } from './lines';
import { harnessFiles, itemsJsonl, parseRemoteResult, type ShardConfig } from './remote';
import type { SweepItem } from './sweepStore';
import { zipStored } from './zip';

export const RESULT_MARK = '@spade-audit-result ';
const FAILED_MARK = '@spade-audit-shard-failed ';

/**
 * A pool audit as one Ray job, through the head's Jobs HTTP API (the workbench needs no Ray of
 * its own, nor the cluster's Python version): the harness and the items go up as the job's
 * runtime_env working_dir package; the job's driver (native/dispatch/ray_driver.py) runs a task per
 * shard and prints each environment's raw result as it finishes; the workbench follows the job's
 * log as the jobs feature does (RayBackend's tail). The driver lives on the cluster, so a killed
 * workbench finds the job again by its submission id; a stop ends the driver and with it its tasks.
 */
export interface RayTargetOptions {
  /** The dashboard, http://host:port (what `ray://host:port` names). */
  address: string;
  /** The interpreter each node sandboxes games with (its path there). */
  python: string;
  /** A Python with `ray` on the head for the driver; else the first of python3, python that has it. */
  driverPython?: string | undefined;
  shardSize: number;
  envTimeoutSec: number;
}

function http(address: string, method: string, path: string, body?: Buffer, type = 'application/json'): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, address), { method, headers: body ? { 'content-type': type, 'content-length': String(body.length) } : {}, timeout: 60_000 }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`Ray API ${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

export class RayExecutor<R> implements SweepExecutor<R> {
  readonly label: string;
  lastError: string | null = null;
  private readonly backend = new RayBackend({ secret: () => undefined });

  constructor(private readonly o: RayTargetOptions) {
    this.label = `ray://${new URL(o.address).host}`;
  }

  private job(handle: Record<string, unknown>): JobRecord {
    const id = String(handle.submissionId);
    const now = new Date().toISOString();
    return {
      id,
      name: id,
      backend: 'ray',
      host: null,
      recipe: null,
      spec: { name: id, backend: 'ray', command: [], workdir: '', env: {}, secretEnv: [], ray: { address: this.o.address }, outputs: {}, ship: [], importEnvironments: false },
      externalId: id,
      state: 'running',
      detail: '',
      exitCode: null,
      remoteLog: null,
      logOffset: 0,
      localLogSize: 0,
      metricsOffset: 0,
      createdAt: now,
      startedAt: now,
      finishedAt: null,
      updatedAt: now,
    };
  }

  async submit(sweepId: string, attempt: number, items: readonly SweepItem[], sources: ReadonlyMap<string, string>, work: SweepWork<R>): Promise<Record<string, unknown>> {
    const remote = items.map((it) => work.remoteItem(it, sources.get(it.sha256)!));
    const config: ShardConfig = { python: this.o.python, envTimeoutSec: this.o.envTimeoutSec, memoryMb: 2048, workers: 1, options: work.options, shardSize: this.o.shardSize, cpusPerTask: 1, runner: work.runner };
    const zip = zipStored([...harnessFiles(), { name: 'input/items.jsonl', data: itemsJsonl(remote) }, { name: 'input/config.json', data: Buffer.from(JSON.stringify(config)) }]);
    // Ray names a working_dir package by its content, as `ray job submit` does.
    const pkg = `_ray_pkg_${createHash('sha1').update(zip).digest('hex').slice(0, 16)}.zip`;
    const have = await http(this.o.address, 'GET', `/api/packages/gcs/${pkg}`);
    if (have.status !== 200) {
      const put = await http(this.o.address, 'PUT', `/api/packages/gcs/${pkg}`, zip, 'application/octet-stream');
      if (put.status < 200 || put.status >= 300) throw new Error(`The Ray head at ${this.o.address} refused the harness package: HTTP ${put.status} ${put.text.slice(0, 300)}`);
    }
    const pythons = [...(this.o.driverPython ? [this.o.driverPython] : []), 'python3', 'python'].map(shQuote).join(' ');
    const entrypoint = `for p in ${pythons}; do if "$p" -c 'import ray' 2>/dev/null; then exec "$p" native/dispatch/ray_driver.py input/config.json input/items.jsonl; fi; done; echo 'No Python with ray on the head node (give --ray-python)' >&2; exit 2`;
    const submissionId = `spade_${work.kind}_${sweepId}_${attempt}`;
    const body = Buffer.from(JSON.stringify({ entrypoint, submission_id: submissionId, runtime_env: { working_dir: `gcs://${pkg}` }, metadata: { spade_workbench_sweep: sweepId } }));
    const r = await http(this.o.address, 'POST', '/api/jobs/', body);
    if (r.status < 200 || r.status >= 300) throw new Error(`The Ray head at ${this.o.address} refused the ${work.kind} job: HTTP ${r.status} ${r.text.slice(0, 300)}`);
    return { kind: 'ray', address: this.o.address, submissionId, environments: items.length };
  }

  async follow(handle: Record<string, unknown>, work: SweepWork<R>, onResult: OnResult<R>, signal: AbortSignal): Promise<void> {
    const job = this.job(handle);
    const lines = new LineReader();
    let ended = false;
    for (;;) {
      if (signal.aborted) return;
      // The end is asked before the last read, so the read after it has the whole log.
      if (!ended) {
        const s = await this.backend.status(job);
        // A job the head no longer knows (deleted, or the cluster restarted) has no log to read.
        if (s.state === 'lost') return;
        ended = isTerminal(s.state);
      }
      const chunk = await this.backend.readLog(job, lines.offset, 1 << 20);
      const data = chunk?.data ?? Buffer.alloc(0);
      for (const line of lines.push(data)) {
        if (line.startsWith(FAILED_MARK)) this.lastError = line.slice(FAILED_MARK.length, FAILED_MARK.length + 2000);
        if (!line.startsWith(RESULT_MARK)) continue;
        const r = parseRemoteResult(line.slice(RESULT_MARK.length));
        if (r) await onResult(r.key, work.fromRemote(r), r.node ?? null);
      }
      if (ended && data.length === 0) return;
      if (data.length === 0) await new Promise((res) => setTimeout(res, 300));
    }
  }

  async stop(handle: Record<string, unknown>): Promise<string> {
    const s = await this.backend.stopAndWait(this.job(handle));
    return `${s.detail}; Ray answered ${s.reply}`;
  }

  async close(): Promise<void> {
    this.backend.close();
  }
}
