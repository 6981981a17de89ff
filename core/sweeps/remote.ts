import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runtimePaths } from '../../runtime/paths';
import type { HarnessReply } from '../../runtime/types';
import { deadAudit, finishAudit } from '../pool';
import type { AuditOptions, EnvAudit } from '../types';
import type { SweepWork } from './executor';

/**
 * What travels between the workbench and a shard runner on a cluster
 * (native/dispatch/shard_audit.py): an item per environment out, a raw result per environment
 * back. Verdicts are made here from the raw reply, by the same function as the local pool's.
 */
export interface RemoteItem {
  key: string;
  source: string;
  hint: string | null;
}

export interface RemoteResult {
  key: string;
  reply?: HarnessReply;
  violations?: { event: string; detail: string }[];
  phase?: string;
  stderrTail?: string;
  elapsedMs?: number;
  node?: string;
  /** Native runs are refused on that node (no interpreter, no bubblewrap): the local pool's answer. */
  unavailable?: string;
  /** The interpreter could not be started: nothing was judged, so nothing is stored and a resume retries it. */
  failed?: string;
  /** What another kind's runner adds (shard_regret.py: the episode's harness calls). */
  [more: string]: unknown;
}

/** The options that decide a verdict: two runs with the same ones give the same result for a version. */
export function checkSetKey(options: AuditOptions): string {
  const decisive = { checks: options.checks ?? null, maxTurns: options.maxTurns ?? 30, callTimeoutSec: options.callTimeoutSec ?? 5, spade: options.spadeCallTimeoutSec ?? null, admission: options.spadeAdmissionTimeoutSec ?? null, ...(options.admissionAlways ? { admissionAlways: true } : {}), ...(options.guessLoad ? { guessLoad: options.guessLoad } : {}), ...(options.resetGate ? { resetGate: options.resetGate.maxTurns } : {}) };
  return createHash('sha256').update(JSON.stringify(decisive)).digest('hex').slice(0, 16);
}

/** A result is keyed by the environment version and the check set: the same pair arriving twice is one result. */
export function itemKey(versionHash: string, checkSet: string): string {
  return `${versionHash}:${checkSet}`;
}

/** One result line (a JSONL line, or a Ray log line after its marker); null when it is not one. */
export function parseRemoteResult(text: string): RemoteResult | null {
  try {
    const r = JSON.parse(text) as RemoteResult;
    return r && typeof r === 'object' && typeof r.key === 'string' ? r : null;
  } catch {
    return null; // a line cut short by a kill; the environment is run again
  }
}

/** The audit a remote result makes, exactly as the local pool makes it; null when it must run again. */
export function remoteAudit(r: RemoteResult, options: AuditOptions): EnvAudit | null {
  if (r.failed !== undefined) return null;
  if (r.unavailable !== undefined) return deadAudit(options, 'spade.exec', r.unavailable, '', 0, false);
  if (!r.reply) return null;
  return finishAudit(r.reply, { violations: r.violations ?? [], phase: r.phase ?? '', stderrTail: r.stderrTail ?? '' }, options, r.elapsedMs ?? 0);
}

/** The harness and the shard runner, as the files a cluster gets (`native/...`). */
export function harnessFiles(): { name: string; data: Buffer }[] {
  const dir = runtimePaths().nativeDir;
  const out: { name: string; data: Buffer }[] = [];
  const walk = (sub: string) => {
    for (const name of readdirSync(join(dir, sub)).sort()) {
      const rel = sub ? `${sub}/${name}` : name;
      if (name === '__pycache__' || name.startsWith('.')) continue;
      if (statSync(join(dir, rel)).isDirectory()) walk(rel);
      else if (name.endsWith('.py')) out.push({ name: `native/${rel}`, data: readFileSync(join(dir, rel)) });
    }
  };
  walk('');
  return out;
}

/** A pool audit as a sweep's work: shard_audit.py on the nodes, verdicts made here. */
export function auditWork(options: AuditOptions): SweepWork<EnvAudit> {
  return {
    kind: 'audit',
    runner: 'shard_audit',
    options,
    remoteItem: (it, source) => ({ key: it.key, source, hint: it.hint }),
    fromRemote: (r) => remoteAudit(r, options),
  };
}

/** What every shard runner is told: the interpreter to sandbox (on the node), the limits, the options. */
export interface ShardConfig {
  python: string;
  envTimeoutSec: number;
  memoryMb: number;
  workers: number;
  options: unknown;
  /** The shard runner a Ray task imports (native/dispatch/<runner>.py). */
  runner?: string;
  shardSize?: number;
  cpusPerTask?: number;
}

export function itemsJsonl(items: readonly Record<string, unknown>[]): Buffer {
  return Buffer.from(items.map((i) => JSON.stringify(i)).join('\n') + '\n', 'utf8');
}
