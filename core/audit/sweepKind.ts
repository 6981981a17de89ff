import { createHash } from 'node:crypto';
import type { Db } from '../memory/db';
import { appVersion } from '../base/appInfo';
import type { HarnessReply } from '../runtime/types';
import type { SweepExecutor, SweepWork } from '../sweeps/executor';
import type { RemoteResult } from '../sweeps/remote';
import { driveSweep, type DriveSweepOptions } from '../sweeps/sweep';
import { remoteExecutor, type DispatchSettings, type SweepTarget } from '../sweeps/targets';
import { LocalExecutor } from './localExecutor';
import { deadAudit, finishAudit } from './pool';
import { reportEnv, type ReportEnv } from './report';
import { auditSweeps, saveAudit } from './auditStore';
import { verdictOf, type AuditOptions, type EnvAudit } from './types';

/**
 * A pool audit as a kind of sweep (core/sweeps): its work on the nodes, how its verdicts are made
 * here from what they send back, and its executor for this machine (the native audit pool). The
 * kind itself (its name, which results fail) is registered in store.ts, beside the audits' SQL.
 */
/** What a shard_audit.py result line holds beyond the key (native/dispatch/shard_audit.py). */
export interface RemoteAuditResult extends RemoteResult {
  reply?: HarnessReply;
  violations?: { event: string; detail: string }[];
  phase?: string;
  stderrTail?: string;
  elapsedMs?: number;
  /** Native runs are refused on that node (no interpreter, no bubblewrap): the local pool's answer. */
  unavailable?: string;
}

/** The options that decide a verdict: two runs with the same ones give the same result for a version. */
export function checkSetKey(options: AuditOptions): string {
  const decisive = { checks: options.checks ?? null, maxTurns: options.maxTurns ?? 30, callTimeoutSec: options.callTimeoutSec ?? 5, spade: options.spadeCallTimeoutSec ?? null, admission: options.spadeAdmissionTimeoutSec ?? null, ...(options.admissionAlways ? { admissionAlways: true } : {}), ...(options.guessLoad ? { guessLoad: options.guessLoad } : {}), ...(options.resetGate ? { resetGate: options.resetGate.maxTurns } : {}) };
  return createHash('sha256').update(JSON.stringify(decisive)).digest('hex').slice(0, 16);
}

export { auditSweeps };

/** A result is keyed by the environment version and the check set: the same pair arriving twice is one result. */
export function itemKey(versionHash: string, checkSet: string): string {
  return `${versionHash}:${checkSet}`;
}

/** The audit a remote result makes, exactly as the local pool makes it; null when it must run again. */
export function remoteAudit(result: RemoteResult, options: AuditOptions): EnvAudit | null {
  const r = result as RemoteAuditResult;
  if (r.failed !== undefined) return null;
  if (r.unavailable !== undefined) return deadAudit(options, 'spade.exec', r.unavailable, '', 0, false);
  if (!r.reply) return null;
  return finishAudit(r.reply, { violations: r.violations ?? [], phase: r.phase ?? '', stderrTail: r.stderrTail ?? '' }, options, r.elapsedMs ?? 0);
}

/** A pool audit as a sweep's work: shard_audit.py on the nodes, verdicts made here. */
export function auditWork(options: AuditOptions): SweepWork<EnvAudit> {
  return {
    kind: auditSweeps.kind,
    runner: 'shard_audit',
    options,
    remoteItem: (it, source) => ({ key: it.key, source, hint: it.hint }),
    fromRemote: (r) => remoteAudit(r, options),
  };
}

/** A pool audit's executor: this machine's audit pool, or a cluster. */
export function makeExecutor(t: SweepTarget, s: DispatchSettings, db: Db, dataDir: string): SweepExecutor<EnvAudit> {
  if (t.kind === 'local') return new LocalExecutor(s.workers);
  return remoteExecutor<EnvAudit>(t, s, db, dataDir);
}

export interface RunSweepOptions extends Omit<DriveSweepOptions<EnvAudit>, 'work' | 'accept'> {
  options: AuditOptions;
  /** Keep each result as the version's stored audit too (full check sets only, as `audit --all` does). */
  saveAudits: boolean;
}

/** A pool audit's sweep: each result is an environment's audit, failing when a check fails. */
export async function runSweep(o: RunSweepOptions): Promise<ReportEnv[]> {
  const { db, sweep, executor, options } = o;
  const results = await driveSweep<EnvAudit>({
    ...o,
    work: auditWork(options),
    accept: (it, audit) => {
      if (o.saveAudits) saveAudit(db, it.sha256, audit, { batchId: null, options: { ...options, runtime: 'cpython', sweep: sweep.id, on: executor.label }, toolVersion: appVersion() });
      return { keep: audit, failing: verdictOf(audit.checks) === 'fail' };
    },
  });
  return sweep.items.map((it) => reportEnv(it.file, it.sha256, it.name, results.get(it.key) as EnvAudit));
}
