/**
 * nvidia-smi's CSV query output, read defensively. The node is the job's machine and may print
 * anything: a value it cannot give (`[N/A]`, `[Not Supported]`, `[Unknown Error]`, `ERR!`) or a
 * field that is missing loses that value only, and a line that is not a GPU row is no GPU.
 *
 * The format is nvidia-smi's documented `--format=csv,noheader,nounits`: one line per GPU (per
 * process for `--query-compute-apps`), the queried fields in order, separated by ", ", numbers
 * without their units (`nvidia-smi --help-query-gpu`).
 */

/** What is asked of each GPU, in this order (`nvidia-smi --help-query-gpu` names). */
export const GPU_QUERY = ['index', 'uuid', 'name', 'utilization.gpu', 'memory.used', 'memory.total', 'power.draw', 'temperature.gpu'] as const;
/** What is asked of each process holding a GPU (`nvidia-smi --help-query-compute-apps`). */
export const APPS_QUERY = ['gpu_uuid', 'pid', 'process_name', 'used_memory'] as const;

/** Bounds on what one node may make the workbench keep (a hostile node prints without end). */
export const LIMITS = { line: 4096, name: 200, processName: 300, gpusPerNode: 64, appsPerNode: 1024, nodeName: 128 } as const;

export interface GpuRow {
  index: number;
  uuid: string | null;
  name: string | null;
  /** Percent. */
  util: number | null;
  /** MiB. */
  memUsed: number | null;
  memTotal: number | null;
  /** Watts. */
  power: number | null;
  /** Degrees Celsius. */
  temp: number | null;
}

export interface AppRow {
  gpuUuid: string;
  pid: number | null;
  processName: string | null;
  /** MiB. */
  usedMemory: number | null;
}

/** Printable text, bounded: control characters (a terminal escape from the node) become spaces. */
export function cleanText(s: string, max: number): string {
  return s.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').trim().slice(0, max);
}

/**
 * One value: a number, maybe with the unit nvidia-smi prints without `nounits` ("35 %", "1234 MiB",
 * "70.52 W"), else null (`[N/A]`, `[Not Supported]`, `N/A`, `ERR!`, empty, anything else).
 */
export function readNumber(field: string | undefined): number | null {
  if (field === undefined) return null;
  const m = /^\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*(?:%|MiB|MB|W|C)?\s*$/.exec(field);
  if (!m) return null;
  const n = Number(m[1]);
  return Number.isFinite(n) ? n : null;
}

function readText(field: string | undefined, max: number): string | null {
  if (field === undefined) return null;
  const t = cleanText(field, max);
  if (!t || /^\[.*\]$/.test(t) || t === 'N/A') return null;
  return t;
}

/**
 * The fields of one CSV line. A name may itself hold ", " (nvidia-smi does not quote it), so
 * the fields before and after the named position are taken from each end and the rest is the name.
 */
function splitFields(line: string, count: number, textAt: number): string[] | null {
  const parts = line.split(',').map((p) => p.trim());
  if (parts.length < 2) return null;
  if (parts.length <= count) return parts;
  const after = count - textAt - 1;
  return [...parts.slice(0, textAt), parts.slice(textAt, parts.length - after).join(', '), ...parts.slice(parts.length - after)];
}

/** A `--query-gpu` line, or null when it is not a GPU row (its first field is no index). */
export function parseGpuLine(line: string): GpuRow | null {
  if (line.length > LIMITS.line) return null;
  const f = splitFields(line, GPU_QUERY.length, 2);
  if (!f || !/^\d{1,4}$/.test(f[0] ?? '')) return null;
  return {
    index: Number(f[0]),
    uuid: readText(f[1], LIMITS.name),
    name: readText(f[2], LIMITS.name),
    util: readNumber(f[3]),
    memUsed: readNumber(f[4]),
    memTotal: readNumber(f[5]),
    power: readNumber(f[6]),
    temp: readNumber(f[7]),
  };
}

/** A `--query-compute-apps` line, or null when it names no GPU. */
export function parseAppLine(line: string): AppRow | null {
  if (line.length > LIMITS.line) return null;
  const f = splitFields(line, APPS_QUERY.length, 2);
  const gpuUuid = f ? readText(f[0], LIMITS.name) : null;
  if (!f || !gpuUuid || !/^[A-Za-z0-9-]+$/.test(gpuUuid)) return null;
  const pid = readNumber(f[1]);
  return { gpuUuid, pid: pid !== null && Number.isInteger(pid) && pid >= 0 ? pid : null, processName: readText(f[2], LIMITS.processName), usedMemory: readNumber(f[3]) };
}

/** Every GPU row of a whole `--query-gpu` answer (one sample), at most LIMITS.gpusPerNode, by index. */
export function parseGpuSample(text: string): GpuRow[] {
  const byIndex = new Map<number, GpuRow>();
  for (const line of text.split('\n')) {
    const row = parseGpuLine(line);
    if (row && !byIndex.has(row.index) && byIndex.size < LIMITS.gpusPerNode) byIndex.set(row.index, row);
  }
  return [...byIndex.values()];
}
