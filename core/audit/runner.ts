import { probePython } from '../runtime/native';
import { appVersion } from '../base/appInfo';
import { PyodidePool } from '../runtime/pyodidePool';
import { AuditPool } from './pool';
import { auditIn, PyodideAuditRunner } from './pyodideRunner';
import type { RuntimeKind } from '../api/schemas';
import { buildReport, reportEnv, type AuditReport, type ReportEnv } from './report';
import { ALL_CHECKS, type AuditOptions } from './types';
import { DEFAULT_BUDGET, WORKBENCH_CALL_SEC } from '../api/spadeRules';

export interface RunItem {
  file: string;
  sha256: string;
  name: string;
  source: string;
  hint: string | null;
}

/** What the report says about the tool that made it (kept small; scripts read `name`/`version`). */
export function toolInfo(options: AuditOptions, workers: number, runtime: RuntimeKind = 'cpython'): Record<string, unknown> {
  const py = probePython();
  return {
    name: 'spade-workbench',
    version: appVersion(),
    runtime,
    python: py?.version ?? null,
    numpy: py?.numpy ?? false,
    workers,
    checks: options.checks?.length ? options.checks : ALL_CHECKS,
    maxTurns: options.maxTurns ?? DEFAULT_BUDGET,
    callTimeoutSec: options.callTimeoutSec ?? WORKBENCH_CALL_SEC,
  };
}

/** Audits items on a pool, keeping input order in the output; `onResult` sees each as it lands. */
export async function auditItems(pool: AuditPool, items: readonly RunItem[], options: AuditOptions, onResult?: (i: number, r: ReportEnv) => void): Promise<ReportEnv[]> {
  const out: ReportEnv[] = new Array(items.length);
  await Promise.all(
    items.map(async (it, i) => {
      const a = await pool.audit(it.source, { ...options, hint: it.hint });
      out[i] = reportEnv(it.file, it.sha256, it.name, a);
      onResult?.(i, out[i]);
    }),
  );
  return out;
}

/**
 * A whole report. 'cpython': every environment in native CPython (in bubblewrap); 'pyodide': in
 * the Pyodide sandbox, games that need a module it lacks (numpy) going native, as in the app.
 */
export async function auditToReport(items: readonly RunItem[], options: AuditOptions, workers: number, envTimeoutSec?: number, runtime: RuntimeKind = 'cpython'): Promise<AuditReport> {
  const pool = new AuditPool({ workers, ...(envTimeoutSec ? { envTimeoutSec } : {}) });
  const sandbox = runtime === 'pyodide' ? new PyodidePool({ size: workers }) : undefined;
  try {
    const runner = sandbox ? new PyodideAuditRunner(() => sandbox, (envTimeoutSec ?? 120) * 1000) : undefined;
    const envs = runner
      ? await Promise.all(items.map(async (it) => reportEnv(it.file, it.sha256, it.name, (await auditIn('pyodide', { native: () => pool, sandbox: () => runner }, it.source, { ...options, hint: it.hint })).audit)))
      : await auditItems(pool, items, options);
    return buildReport(toolInfo(options, workers, runtime), envs);
  } finally {
    await Promise.all([pool.close(), sandbox?.shutdown()]);
  }
}
