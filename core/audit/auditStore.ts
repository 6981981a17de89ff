import type { Db } from '../memory/db';
import { currentHint } from '../memory/repository';
import type { RuntimeKind } from '../api/schemas';
import { registerSweepKind } from '../sweeps/kinds';
import type { PoolVersion } from '../sweeps/sweepStore';

export { headHashes, targetsFor } from '../sweeps/sweepStore';
/** What a batch needs per version (the same as what a sweep's pool is made of). */
export type AuditTarget = PoolVersion;
import { ALL_CHECKS, spadeAccepts, verdictOf, type CheckResult, type CheckStatus, type EnvAudit, type Verdict } from './types';

/**
 * A pool audit as a kind of sweep (core/sweeps): each item an environment version under a check
 * set, its result that version's EnvAudit, failing when a check fails. The design round's checks
 * on a cluster are the same work, one program at a time (auditOn.ts). Its work and verdicts:
 * sweepKind.ts.
 */
export const auditSweeps = registerSweepKind({
  kind: 'audit',
  label: 'audit sweep',
  article: 'a pool audit',
  failingSql: "EXISTS (SELECT 1 FROM json_each(result, '$.checks') WHERE json_extract(value, '$.status') = 'fail')",
});

/** Audit results per environment version, in the memory database (migration 6). */
export interface StoredAudit {
  hash: string;
  verdict: Verdict;
  spadeAccepts: boolean;
  className: string | null;
  toolUse: boolean;
  checks: CheckResult[];
  elapsedMs: number;
  batchId: string | null;
  createdAt: string;
  /** Where it ran: the Pyodide sandbox or native CPython (null for audits stored before this was kept). */
  runtime: RuntimeKind | null;
}

export function saveAudit(db: Db, hash: string, a: EnvAudit, opts: { batchId?: string | null; options?: unknown; toolVersion: string }): StoredAudit {
  const now = new Date().toISOString();
  const verdict = verdictOf(a.checks);
  const accepts = spadeAccepts(a.checks);
  db.transaction(() => {
    db.prepare('DELETE FROM audits WHERE version_hash = ?').run(hash);
    db.prepare(
      'INSERT INTO audits (version_hash, verdict, spade_accepts, class_name, tool_use, checks, options, elapsed_ms, batch_id, tool_version, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ).run(hash, verdict, accepts ? 1 : 0, a.className, a.toolUse ? 1 : 0, JSON.stringify(a.checks), JSON.stringify(opts.options ?? {}), a.elapsedMs, opts.batchId ?? null, opts.toolVersion, now);
    const ins = db.prepare('INSERT INTO audit_check_status (version_hash, check_id, status) VALUES (?, ?, ?)');
    for (const c of a.checks) ins.run(hash, c.id, c.status);
  })();
  return { hash, verdict, spadeAccepts: accepts, className: a.className, toolUse: a.toolUse, checks: a.checks, elapsedMs: a.elapsedMs, batchId: opts.batchId ?? null, createdAt: now, runtime: runtimeOf(opts.options) };
}

function runtimeOf(options: unknown): StoredAudit['runtime'] {
  const r = (options as { runtime?: unknown } | null)?.runtime;
  return r === 'pyodide' || r === 'cpython' ? r : null;
}

interface AuditRow {
  version_hash: string;
  verdict: Verdict;
  spade_accepts: number;
  class_name: string | null;
  tool_use: number;
  checks: string;
  elapsed_ms: number;
  batch_id: string | null;
  created_at: string;
  options: string;
}

export function getAudit(db: Db, hash: string): StoredAudit | null {
  const r = db.prepare('SELECT * FROM audits WHERE version_hash = ?').get(hash) as AuditRow | undefined;
  if (!r) return null;
  return {
    hash: r.version_hash,
    verdict: r.verdict,
    spadeAccepts: r.spade_accepts === 1,
    className: r.class_name,
    toolUse: r.tool_use === 1,
    checks: JSON.parse(r.checks) as CheckResult[],
    elapsedMs: r.elapsed_ms,
    batchId: r.batch_id,
    createdAt: r.created_at,
    runtime: runtimeOf(JSON.parse(r.options)),
  };
}

export interface PoolSummary {
  environments: number;
  audited: number;
  verdicts: Record<Verdict, number>;
  spadeAccepted: number;
  byCheck: { id: string; pass: number; warn: number; fail: number; skip: number; failShare: number }[];
}

/** Over each environment's head version: the share failing each check (the pool dashboard). */
export function poolSummary(db: Db): PoolSummary {
  const environments = (db.prepare('SELECT COUNT(*) AS n FROM environments').get() as { n: number }).n;
  const verdictRows = db.prepare('SELECT a.verdict, COUNT(*) AS n, SUM(a.spade_accepts) AS acc FROM environments e JOIN audits a ON a.version_hash = e.head_hash GROUP BY a.verdict').all() as { verdict: Verdict; n: number; acc: number }[];
  const verdicts: Record<Verdict, number> = { pass: 0, warn: 0, fail: 0 };
  let audited = 0;
  let spadeAccepted = 0;
  for (const r of verdictRows) {
    verdicts[r.verdict] = r.n;
    audited += r.n;
    spadeAccepted += r.acc ?? 0;
  }
  const rows = db.prepare('SELECT s.check_id, s.status, COUNT(*) AS n FROM environments e JOIN audit_check_status s ON s.version_hash = e.head_hash GROUP BY s.check_id, s.status').all() as { check_id: string; status: CheckStatus; n: number }[];
  const by = new Map<string, Record<CheckStatus, number>>();
  for (const r of rows) {
    const row = by.get(r.check_id) ?? { pass: 0, warn: 0, fail: 0, skip: 0 };
    row[r.status] = r.n;
    by.set(r.check_id, row);
  }
  const byCheck = [...by.entries()]
    .sort(([a], [b]) => (ALL_CHECKS.indexOf(a) + 100) % 100 - ((ALL_CHECKS.indexOf(b) + 100) % 100))
    .map(([id, c]) => ({ id, ...c, failShare: audited ? c.fail / audited : 0 }));
  return { environments, audited, verdicts, spadeAccepted, byCheck };
}

/** Environment ids whose head version has this status for this check (the dashboard's click-through). */
export function envIdsWith(db: Db, checkId: string, status: CheckStatus): number[] {
  return (
    db.prepare('SELECT e.id FROM environments e JOIN audit_check_status s ON s.version_hash = e.head_hash WHERE s.check_id = ? AND s.status = ? ORDER BY e.id').all(checkId, status) as { id: number }[]
  ).map((r) => r.id);
}

export interface BatchRow {
  id: string;
  state: 'running' | 'cancelled' | 'done' | 'failed';
  total: number;
  done: number;
  hashes: string[];
  options: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export function createBatch(db: Db, id: string, hashes: string[], options: unknown): void {
  const now = new Date().toISOString();
  db.prepare('INSERT INTO audit_batches (id, state, total, done, hashes, options, created_at, updated_at) VALUES (?, ?, ?, 0, ?, ?, ?, ?)').run(id, 'running', hashes.length, JSON.stringify(hashes), JSON.stringify(options ?? {}), now, now);
}

export function updateBatch(db: Db, id: string, patch: { state?: BatchRow['state']; done?: number }): void {
  const now = new Date().toISOString();
  if (patch.state !== undefined) db.prepare('UPDATE audit_batches SET state = ?, updated_at = ? WHERE id = ?').run(patch.state, now, id);
  if (patch.done !== undefined) db.prepare('UPDATE audit_batches SET done = ?, updated_at = ? WHERE id = ?').run(patch.done, now, id);
}

export function getBatch(db: Db, id: string): BatchRow | null {
  const r = db.prepare('SELECT * FROM audit_batches WHERE id = ?').get(id) as
    | { id: string; state: BatchRow['state']; total: number; done: number; hashes: string; options: string; created_at: string; updated_at: string }
    | undefined;
  if (!r) return null;
  return { id: r.id, state: r.state, total: r.total, done: r.done, hashes: JSON.parse(r.hashes) as string[], options: JSON.parse(r.options) as Record<string, unknown>, createdAt: r.created_at, updatedAt: r.updated_at };
}

export function listBatches(db: Db, limit = 20): Omit<BatchRow, 'hashes'>[] {
  return (db.prepare('SELECT id FROM audit_batches ORDER BY created_at DESC LIMIT ?').all(limit) as { id: string }[]).map((r) => {
    const { hashes: _h, ...rest } = getBatch(db, r.id)!;
    return rest;
  });
}

/** Versions of a batch still without a result from that batch: what a resume runs. */
export function remainingInBatch(db: Db, b: BatchRow): string[] {
  const q = db.prepare('SELECT 1 FROM audits WHERE version_hash = ? AND batch_id = ?');
  return b.hashes.filter((h) => !q.get(h, b.id));
}
