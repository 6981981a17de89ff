import { createHash, randomUUID } from 'node:crypto';
import type { Db } from '../../memory/db';
import type { EnvAudit } from '../types';
import type { SweepKind } from './executor';
import type { SweepOwner } from './sweepOwner';

/**
 * Sweeps (local, Ray, Slurm) and the results that arrived, in the memory database: pool audits
 * and regret sweeps (`kind`). The tables are made on first use rather than by a numbered
 * migration: they belong to this feature alone and nothing else reads them; the `kind` column
 * came later and is added to a table made before it, where every sweep was an audit. A result is
 * stored once per sweep and item key (`INSERT OR IGNORE` on that key): a result that arrives twice
 * (a log read again after a reconnect, a task run twice) counts once.
 */
export type SweepState = 'running' | 'done' | 'cancelled' | 'failed';
export type { SweepKind } from './executor';

export interface SweepItem {
  key: string;
  file: string;
  sha256: string;
  name: string;
  hint: string | null;
  /** Regret sweeps: the episode's seed and arm (the key names them too); null: reset with no seed, `slot` its place. */
  seed?: number | null;
  slot?: number;
  arm?: 'hint' | 'nohint';
}

export interface SweepRow {
  id: string;
  kind: SweepKind;
  /** Same target, pool query, check set and versions: the same sweep, resumed by running the command again. */
  ident: string;
  target: string;
  query: string;
  options: Record<string, unknown>;
  items: SweepItem[];
  state: SweepState;
  /** What the engine knows the sweep's work by (a Ray submission id, a Slurm job id and its folder). */
  remote: Record<string, unknown>[];
  /** The process driving it (sweepOwner.ts): set while one does, alive or not. */
  owner: SweepOwner | null;
  /** Why it ended as it did (what failed it, what a cluster answered to a stop); null while it runs. */
  message: string | null;
  createdAt: string;
  updatedAt: string;
}

const ready = new WeakSet<Db>();

function tables(db: Db): void {
  if (ready.has(db)) return;
  db.exec(`CREATE TABLE IF NOT EXISTS audit_sweeps (
    id TEXT PRIMARY KEY, ident TEXT NOT NULL, target TEXT NOT NULL, query TEXT NOT NULL, options TEXT NOT NULL,
    items TEXT NOT NULL, state TEXT NOT NULL, remote TEXT NOT NULL DEFAULT '[]', created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
  CREATE INDEX IF NOT EXISTS audit_sweeps_ident ON audit_sweeps (ident, created_at);
  CREATE TABLE IF NOT EXISTS audit_sweep_results (
    sweep_id TEXT NOT NULL REFERENCES audit_sweeps(id) ON DELETE CASCADE, item_key TEXT NOT NULL, audit TEXT NOT NULL,
    node TEXT, created_at TEXT NOT NULL, PRIMARY KEY (sweep_id, item_key));`);
  const cols = db.prepare('PRAGMA table_info(audit_sweeps)').all() as { name: string }[];
  if (!cols.some((c) => c.name === 'kind')) db.exec("ALTER TABLE audit_sweeps ADD COLUMN kind TEXT NOT NULL DEFAULT 'audit'");
  // The process driving it now (sweepOwner.ts), or null; made later than the table, as kind was.
  if (!cols.some((c) => c.name === 'owner')) db.exec('ALTER TABLE audit_sweeps ADD COLUMN owner TEXT');
  // Why it ended: a failed sweep said why only to whoever watched it, and was "failed" after a restart.
  if (!cols.some((c) => c.name === 'message')) db.exec('ALTER TABLE audit_sweeps ADD COLUMN message TEXT');
  ready.add(db);
}

export function sweepIdent(target: string, query: string, checkSet: string, keys: readonly string[]): string {
  return createHash('sha256').update(JSON.stringify([target, query, checkSet, [...keys].sort()])).digest('hex').slice(0, 24);
}

interface Row {
  id: string;
  kind: SweepKind;
  ident: string;
  target: string;
  query: string;
  options: string;
  items: string;
  state: SweepState;
  remote: string;
  owner: string | null;
  message: string | null;
  created_at: string;
  updated_at: string;
}

function fromRow(r: Row): SweepRow {
  return {
    id: r.id,
    kind: r.kind,
    ident: r.ident,
    target: r.target,
    query: r.query,
    options: JSON.parse(r.options) as Record<string, unknown>,
    items: JSON.parse(r.items) as SweepItem[],
    state: r.state,
    remote: JSON.parse(r.remote) as Record<string, unknown>[],
    owner: r.owner ? (JSON.parse(r.owner) as SweepOwner) : null,
    message: r.message ?? null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function createSweep(db: Db, s: { ident: string; target: string; query: string; options: unknown; items: SweepItem[]; kind?: SweepKind }): SweepRow {
  tables(db);
  const now = new Date().toISOString();
  const id = randomUUID().slice(0, 8);
  db.prepare('INSERT INTO audit_sweeps (id, kind, ident, target, query, options, items, state, remote, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').run(
    id, s.kind ?? 'audit', s.ident, s.target, s.query, JSON.stringify(s.options ?? {}), JSON.stringify(s.items), 'running', '[]', now, now,
  );
  return getSweep(db, id)!;
}

export function getSweep(db: Db, id: string): SweepRow | null {
  tables(db);
  const r = db.prepare('SELECT * FROM audit_sweeps WHERE id = ?').get(id) as Row | undefined;
  return r ? fromRow(r) : null;
}

/** The newest unfinished sweep of the same command (what running it again resumes). */
export function unfinishedSweep(db: Db, ident: string): SweepRow | null {
  tables(db);
  const r = db.prepare("SELECT * FROM audit_sweeps WHERE ident = ? AND state = 'running' ORDER BY created_at DESC LIMIT 1").get(ident) as Row | undefined;
  return r ? fromRow(r) : null;
}

/** Its new state, and why it is in it (kept for anyone who looks later; cleared by any other change). */
export function setSweepState(db: Db, id: string, state: SweepState, message: string | null = null): void {
  db.prepare('UPDATE audit_sweeps SET state = ?, message = ?, updated_at = ? WHERE id = ?').run(state, message, new Date().toISOString(), id);
}

/** Writes the process that drives the sweep now (sweepOwner.ts). */
export function setSweepOwner(db: Db, id: string, owner: SweepOwner): void {
  db.prepare('UPDATE audit_sweeps SET owner = ? WHERE id = ?').run(JSON.stringify(owner), id);
}

/** Clears the owner, if it is still this one (a later driver's stays). */
export function clearSweepOwner(db: Db, id: string, owner: SweepOwner): void {
  db.prepare('UPDATE audit_sweeps SET owner = NULL WHERE id = ? AND owner = ?').run(id, JSON.stringify(owner));
}

/** Remembers the engine's handle on a submission (before waiting on it, so a killed workbench finds it). */
export function addRemote(db: Db, id: string, remote: Record<string, unknown>): void {
  const s = getSweep(db, id);
  if (!s) return;
  db.prepare('UPDATE audit_sweeps SET remote = ?, updated_at = ? WHERE id = ?').run(JSON.stringify([...s.remote, remote]), new Date().toISOString(), id);
}

/** Stores a result unless one is there for the key; true when it was new. */
export function addResult(db: Db, sweepId: string, key: string, audit: unknown, node: string | null): boolean {
  const r = db.prepare('INSERT OR IGNORE INTO audit_sweep_results (sweep_id, item_key, audit, node, created_at) VALUES (?, ?, ?, ?, ?)').run(sweepId, key, JSON.stringify(audit), node, new Date().toISOString());
  return r.changes === 1;
}

/** Each item's stored result (an audit sweep's are EnvAudits; the `audit` column holds any kind's). */
export function sweepResults<T = EnvAudit>(db: Db, sweepId: string): Map<string, T> {
  tables(db);
  const rows = db.prepare('SELECT item_key, audit FROM audit_sweep_results WHERE sweep_id = ?').all(sweepId) as { item_key: string; audit: string }[];
  return new Map(rows.map((r) => [r.item_key, JSON.parse(r.audit) as T]));
}

export function resultCount(db: Db, sweepId: string): number {
  tables(db);
  return (db.prepare('SELECT COUNT(*) AS n FROM audit_sweep_results WHERE sweep_id = ?').get(sweepId) as { n: number }).n;
}

/** Each version's source, by hash (a sweep keeps only the hashes); a version no longer kept is missing. */
export function versionSources(db: Db, hashes: readonly string[]): Map<string, string> {
  const q = db.prepare('SELECT source FROM versions WHERE hash = ?');
  const out = new Map<string, string>();
  for (const h of hashes) {
    const r = q.get(h) as { source: string } | undefined;
    if (r) out.set(h, r.source);
  }
  return out;
}

/** The SSH targets of jobs launched before over SSH or Slurm, newest first (the saved job hosts). */
export function savedJobHosts(db: Db): unknown[] {
  return (db.prepare("SELECT spec FROM jobs WHERE backend IN ('slurm', 'ssh') ORDER BY created_at DESC").all() as { spec: string }[]).map((r) => (JSON.parse(r.spec) as { ssh?: unknown }).ssh).filter((s) => !!s);
}

/** The newest sweeps of a kind first. */
export function recentSweeps(db: Db, limit: number, kind: SweepKind = 'audit'): SweepRow[] {
  tables(db);
  return (db.prepare('SELECT * FROM audit_sweeps WHERE kind = ? ORDER BY created_at DESC, rowid DESC LIMIT ?').all(kind, limit) as Row[]).map(fromRow);
}

/** Results that arrived, and how many of them fail a check (read in SQLite: a pool's results are not parsed to count them). */
export function sweepCounts(db: Db, sweepId: string): { done: number; failed: number } {
  tables(db);
  return db
    .prepare(
      `SELECT COUNT(*) AS done, COALESCE(SUM(EXISTS (SELECT 1 FROM json_each(audit, '$.checks') WHERE json_extract(value, '$.status') = 'fail')), 0) AS failed
       FROM audit_sweep_results WHERE sweep_id = ?`,
    )
    .get(sweepId) as { done: number; failed: number };
}

/** A regret sweep's episodes that arrived, and how many of them failed (no return), read in SQLite. */
export function regretSweepCounts(db: Db, sweepId: string): { done: number; failed: number } {
  tables(db);
  return db.prepare("SELECT COUNT(*) AS done, COALESCE(SUM(json_extract(audit, '$.failed') = 1), 0) AS failed FROM audit_sweep_results WHERE sweep_id = ?").get(sweepId) as { done: number; failed: number };
}
