import type { JobGpu } from '../../api/calls/jobsGpu';
import type { Db } from '../../memory/db';
import type { AppRow, GpuRow } from './nvidiaSmi';
import { LIMITS } from './nvidiaSmi';

export type SamplerState = NonNullable<JobGpu['sampler']>['state'];

/** The row that holds the sampler's own state among the per-node rows (no node is named ''). */
const SAMPLER = '';
/** Nodes kept per job: a stream naming endless hosts must not grow the table without end. */
const MAX_NODES = 256;

/** A job's GPU samples, processes and per-node "GPU seen or not", in the workbench database. */
export class GpuStore {
  constructor(private readonly db: Db) {}

  private nodeCount(jobId: string): number {
    return (this.db.prepare(`SELECT COUNT(*) AS n FROM job_gpu_nodes WHERE job_id = ? AND node <> ''`).get(jobId) as { n: number }).n;
  }

  private knownNode(jobId: string, node: string): boolean {
    return Boolean(this.db.prepare('SELECT 1 FROM job_gpu_nodes WHERE job_id = ? AND node = ?').get(jobId, node));
  }

  /** Records a node's verdict; false when the job already has MAX_NODES others (the node is ignored). */
  setNode(jobId: string, node: string, state: 'gpus' | 'no-gpu', detail: string): boolean {
    if (!node || (!this.knownNode(jobId, node) && this.nodeCount(jobId) >= MAX_NODES)) return false;
    this.db
      .prepare('INSERT OR REPLACE INTO job_gpu_nodes (job_id, node, state, detail, updated_at) VALUES (?, ?, ?, ?, ?)')
      .run(jobId, node, state, detail.slice(0, 500), new Date().toISOString());
    return true;
  }

  setSampler(jobId: string, state: SamplerState, detail: string): void {
    this.db
      .prepare('INSERT OR REPLACE INTO job_gpu_nodes (job_id, node, state, detail, updated_at) VALUES (?, ?, ?, ?, ?)')
      .run(jobId, SAMPLER, state, detail.slice(0, 500), new Date().toISOString());
  }

  sampler(jobId: string): JobGpu['sampler'] {
    const r = this.db.prepare('SELECT state, detail, updated_at AS updatedAt FROM job_gpu_nodes WHERE job_id = ? AND node = ?').get(jobId, SAMPLER) as
      | { state: SamplerState; detail: string; updatedAt: string }
      | undefined;
    return r ?? null;
  }

  /** One sample of a node's GPUs, read at `t` (seconds). */
  addSample(jobId: string, node: string, t: number, rows: GpuRow[]): void {
    if (!rows.length) return;
    const ins = this.db.prepare('INSERT INTO job_gpu_samples (job_id, node, gpu, t, uuid, name, util, mem_used, mem_total, power, temp) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    this.db.transaction(() => {
      for (const r of rows.slice(0, LIMITS.gpusPerNode)) ins.run(jobId, node, r.index, t, r.uuid, r.name, r.util, r.memUsed, r.memTotal, r.power, r.temp);
    })();
  }

  /** The processes on a node's GPUs now: the last answer replaces the one before. */
  setProcs(jobId: string, node: string, t: number, apps: AppRow[]): void {
    const del = this.db.prepare('DELETE FROM job_gpu_procs WHERE job_id = ? AND node = ?');
    const ins = this.db.prepare('INSERT INTO job_gpu_procs (job_id, node, t, gpu_uuid, pid, process_name, used_memory) VALUES (?, ?, ?, ?, ?, ?, ?)');
    this.db.transaction(() => {
      del.run(jobId, node);
      for (const a of apps.slice(0, LIMITS.appsPerNode)) ins.run(jobId, node, t, a.gpuUuid, a.pid, a.processName, a.usedMemory);
    })();
  }

  sampleCount(jobId: string): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM job_gpu_samples WHERE job_id = ?').get(jobId) as { n: number }).n;
  }

  /** Everything the GPU panel shows, each GPU's series thinned evenly to at most `maxPoints`. */
  view(jobId: string, maxPoints = 600): JobGpu {
    const nodes = this.db.prepare(`SELECT node, state, detail FROM job_gpu_nodes WHERE job_id = ? AND node <> '' ORDER BY node`).all(jobId) as {
      node: string;
      state: 'gpus' | 'no-gpu';
      detail: string;
    }[];
    const gpusOf = this.db.prepare('SELECT DISTINCT gpu FROM job_gpu_samples WHERE job_id = ? AND node = ? ORDER BY gpu');
    const samples = this.db.prepare(
      'SELECT t, uuid, name, util, mem_used AS memUsed, mem_total AS memTotal, power, temp FROM job_gpu_samples WHERE job_id = ? AND node = ? AND gpu = ? ORDER BY t',
    );
    const procs = this.db.prepare('SELECT t, gpu_uuid AS gpuUuid, pid, process_name AS processName, used_memory AS usedMemory FROM job_gpu_procs WHERE job_id = ? AND node = ? ORDER BY gpu_uuid, pid');
    type S = { t: number; uuid: string | null; name: string | null; util: number | null; memUsed: number | null; memTotal: number | null; power: number | null; temp: number | null };
    return {
      sampler: this.sampler(jobId),
      nodes: nodes.map((n) => {
        const gpus = (gpusOf.all(jobId, n.node) as { gpu: number }[]).map(({ gpu }) => {
          const all = samples.all(jobId, n.node, gpu) as S[];
          const step = Math.max(1, Math.ceil(all.length / maxPoints));
          // Evenly thinned, always keeping the latest sample.
          const rows = all.filter((_r, i) => i % step === 0 || i === all.length - 1);
          const last = all[all.length - 1];
          return {
            index: gpu,
            uuid: last?.uuid ?? null,
            name: last?.name ?? null,
            memTotal: last?.memTotal ?? null,
            t: rows.map((r) => r.t),
            util: rows.map((r) => r.util),
            memUsed: rows.map((r) => r.memUsed),
            power: rows.map((r) => r.power),
            temp: rows.map((r) => r.temp),
          };
        });
        const byUuid = new Map(gpus.filter((g) => g.uuid).map((g) => [g.uuid!, g.index]));
        const ps = procs.all(jobId, n.node) as { t: number; gpuUuid: string; pid: number | null; processName: string | null; usedMemory: number | null }[];
        return {
          node: n.node,
          state: n.state,
          detail: n.detail,
          gpus,
          procs: ps.map((p) => ({ gpuUuid: p.gpuUuid, gpuIndex: byUuid.get(p.gpuUuid) ?? null, pid: p.pid, processName: p.processName, usedMemory: p.usedMemory })),
          procsAt: ps[0]?.t ?? null,
        };
      }),
    };
  }
}
