import { cleanText, LIMITS, type AppRow, type GpuRow } from './nvidiaSmi';

/**
 * Ray's node stats as its dashboard serves them (`GET /nodes?view=summary`: data.summary[], each
 * node's `gpus` as the reporter agent reads them, GpuUtilizationInfo in
 * ray/dashboard/modules/reporter/gpu_providers.py at Ray 2.x: index, name, uuid, utilization_gpu,
 * memory_used and memory_total in MB, processes_pids {pid: {pid, gpu_memory_usage}}, and on newer
 * Ray power_mw and temperature_c). Read defensively: a field of another type is that value lost.
 */
export interface RayNodeGpus {
  node: string;
  gpus: GpuRow[];
  apps: AppRow[];
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const text = (v: unknown, max: number): string | null => (typeof v === 'string' && cleanText(v, max) ? cleanText(v, max) : null);

function appsOf(gpu: Record<string, unknown>, uuid: string | null): AppRow[] {
  if (!uuid || !/^[A-Za-z0-9-]+$/.test(uuid)) return [];
  const p = gpu.processes_pids ?? gpu.processesPids;
  // A dict keyed by pid in Ray 2.4x+, a list in older reporters.
  const list: unknown[] = Array.isArray(p) ? p : p && typeof p === 'object' ? Object.values(p) : [];
  const out: AppRow[] = [];
  for (const item of list.slice(0, LIMITS.appsPerNode)) {
    if (!item || typeof item !== 'object') continue;
    const r = item as Record<string, unknown>;
    const pid = num(r.pid);
    out.push({ gpuUuid: uuid, pid: pid !== null && Number.isInteger(pid) && pid >= 0 ? pid : null, processName: null, usedMemory: num(r.gpu_memory_usage ?? r.gpuMemoryUsage) });
  }
  return out;
}

/** The nodes of a `/nodes?view=summary` answer with their GPUs (an empty list: that node has none). */
export function parseRayNodes(body: string): RayNodeGpus[] {
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch {
    return [];
  }
  const summary = (data as { data?: { summary?: unknown } } | null)?.data?.summary;
  if (!Array.isArray(summary)) return [];
  const out: RayNodeGpus[] = [];
  for (const n of summary.slice(0, 256)) {
    if (!n || typeof n !== 'object') continue;
    const node = n as Record<string, unknown>;
    const raylet = (node.raylet ?? {}) as Record<string, unknown>;
    if (typeof raylet.state === 'string' && raylet.state !== 'ALIVE') continue;
    const name = text(node.hostname, LIMITS.nodeName) ?? text(node.ip, LIMITS.nodeName);
    if (!name) continue;
    const gpus: GpuRow[] = [];
    const apps: AppRow[] = [];
    for (const g of Array.isArray(node.gpus) ? node.gpus.slice(0, LIMITS.gpusPerNode) : []) {
      if (!g || typeof g !== 'object') continue;
      const r = g as Record<string, unknown>;
      const index = num(r.index);
      if (index === null || !Number.isInteger(index) || index < 0) continue;
      const uuid = text(r.uuid, LIMITS.name);
      const mw = num(r.power_mw);
      gpus.push({
        index,
        uuid,
        name: text(r.name, LIMITS.name),
        util: num(r.utilization_gpu),
        memUsed: num(r.memory_used),
        memTotal: num(r.memory_total),
        power: mw === null ? null : mw / 1000,
        temp: num(r.temperature_c),
      });
      apps.push(...appsOf(r, uuid));
    }
    out.push({ node: name, gpus, apps });
  }
  return out;
}
