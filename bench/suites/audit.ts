import { join } from 'node:path';
import { AuditPool } from '../../core/audit/pool';
import { auditIn, PyodideAuditRunner } from '../../core/audit/pyodideRunner';
import { PyodidePool } from '../../core/runtime/pyodidePool';
import { collectSources } from '../../core/audit/sources';
import { packageRoot } from '../../core/base/appInfo';
import { treeCpuMs } from '../processCpu';
import type { BenchRow, BenchSuite } from '../types';

/** The seed pack varied: each copy differs (a module constant), so no two sources are the same. */
export function variedPack(n: number): { source: string; hint: string | null }[] {
  const pack = collectSources(join(packageRoot(), 'resources', 'seed-pack'));
  return Array.from({ length: n }, (_, i) => {
    const s = pack[i % pack.length]!;
    return { source: `${s.source}\n_BENCH_VARIANT = ${i}\n`, hint: s.hint };
  });
}

export interface Rate {
  perSec: number;
  sec: number;
  /** CPU of every process (this one, the servers, judges, executors) per environment; null off Linux. */
  cpuMsPerEnv: number | null;
}

export function cpuPerEnv(before: number | null, n: number): number | null {
  const after = treeCpuMs();
  return before === null || after === null ? null : (after - before) / n;
}

export async function rate(items: { source: string; hint: string | null }[], workers: number, checks?: string[]): Promise<Rate> {
  const pool = new AuditPool({ workers });
  try {
    // Warm-up: start every process (numpy import) before the clock runs.
    await Promise.all(Array.from({ length: workers * 2 }, (_, i) => pool.audit(items[i % items.length]!.source, { checks: ['spade.exec'] })));
    const cpu = treeCpuMs();
    const t = performance.now();
    await Promise.all(items.map((it) => pool.audit(it.source, { hint: it.hint, ...(checks ? { checks } : {}) })));
    const sec = (performance.now() - t) / 1000;
    return { perSec: items.length / sec, sec, cpuMsPerEnv: cpuPerEnv(cpu, items.length) };
  } finally {
    await pool.close();
  }
}

/** The same batch the way the app audits by default: in the Pyodide sandbox, numpy games native. */
async function sandboxRate(items: { source: string; hint: string | null }[], workers: number): Promise<Rate & { native: number }> {
  const pyodide = new PyodidePool({ size: workers });
  const native = new AuditPool({ workers });
  const sandbox = new PyodideAuditRunner(() => pyodide, 120_000);
  const runners = { native: () => native, sandbox: () => sandbox };
  try {
    await pyodide.allReady();
    await Promise.all(Array.from({ length: workers * 2 }, (_, i) => auditIn('pyodide', runners, items[i % items.length]!.source, { checks: ['spade.exec'] })));
    let sentNative = 0;
    let next = 0;
    const cpu = treeCpuMs();
    const t = performance.now();
    // As the service does: a window of twice the workers in flight.
    await Promise.all(
      Array.from({ length: workers * 2 }, async () => {
        while (next < items.length) {
          const it = items[next++]!;
          const r = await auditIn('pyodide', runners, it.source, { hint: it.hint });
          if (r.runtime === 'cpython') sentNative++;
        }
      }),
    );
    const sec = (performance.now() - t) / 1000;
    return { perSec: items.length / sec, sec, native: sentNative, cpuMsPerEnv: cpuPerEnv(cpu, items.length) };
  } finally {
    await pyodide.shutdown();
    await native.close();
  }
}

export const auditSuite: BenchSuite = {
  prefix: 'audit',
  async run(log) {
    const rows: BenchRow[] = [];
    const all = variedPack(2000);
    log('audit: 2,000 environments, every check, 2 workers');
    const full = await rate(all, 2);
    rows.push({ id: 'audit.envs_per_s', value: full.perSec, unit: 'envs/s', goal: { op: '>=', value: 100 }, note: `2,000 varied seed-pack environments, all checks, native CPython pool, 2 workers, ${full.sec.toFixed(1)} s` });
    log('audit: 2,000 environments in the Pyodide sandbox (the default), every check, 2 workers');
    const sandboxed = await sandboxRate(all, 2);
    rows.push({
      id: 'audit.sandbox_envs_per_s',
      value: sandboxed.perSec,
      unit: 'envs/s',
      goal: { op: '>=', value: 100 },
      note: `the same 2,000 in Pyodide (${sandboxed.native} that import numpy sent to native CPython), 2 workers, ${sandboxed.sec.toFixed(1)} s`,
    });
    // What bounds the two rows above once both cores are busy: 2 cores give 2,000 ms of CPU a second.
    for (const [id, r, what] of [['audit.cpu_ms_per_env', full, 'native CPython pool'], ['audit.sandbox_cpu_ms_per_env', sandboxed, 'Pyodide sandbox']] as const) {
      if (r.cpuMsPerEnv === null) continue;
      rows.push({ id, value: r.cpuMsPerEnv, unit: 'ms', note: `CPU of every process per environment (${what}, all checks); 100 envs/s on 2 cores needs <= 20 ms; at full use of 2 cores this allows ${(2000 / r.cpuMsPerEnv).toFixed(0)} envs/s` });
    }
    log('audit: spade.* only');
    const spade = await rate(all, 2, ['spade.*']);
    rows.push({ id: 'audit.spade_only_envs_per_s', value: spade.perSec, unit: 'envs/s', note: `SPADE's load checks only, 2 workers, ${spade.sec.toFixed(1)} s` });
    log('audit: 1 worker vs 2');
    const sub = all.slice(0, 600);
    const one = await rate(sub, 1);
    const two = await rate(sub, 2);
    rows.push({ id: 'audit.speedup', value: two.perSec / one.perSec, unit: 'x', goal: { op: '>=', value: 1.8 }, note: `600 environments: ${one.perSec.toFixed(0)} envs/s with 1 worker, ${two.perSec.toFixed(0)} with 2` });
    return rows;
  },
};
