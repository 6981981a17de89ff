import { createHash, randomUUID } from 'node:crypto';
import type { Db } from '../memory/db';
import { currentHint } from '../memory/repository';
import type { SweepKind } from './executor';
import { sweepKindInfo, type SweepKindInfo } from './kinds';
import type { SweepOwner } from './sweepOwner';

/**
 * Sweeps (local, Ray, Slurm) and the results that arrived, in the memory database: every kind of
 * sweep (`kind`: pool audits, regret sweeps) in the tables `sweeps` and `sweep_results`, made by
 * numbered migration 20 (core/memory/migrations.ts, which carried over the rows of the tables that
 * this module used to make on first use). A result is stored once per sweep and item key
 * (`INSERT OR IGNORE` on that key): a result that arrives twice (a log read again after a
 * reconnect, a task run twice) counts once.
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

export function createSweep(db: Db, s: { ident: string; target: string; query: string; options: unknown; items: SweepItem[]; kind: SweepKind }): SweepRow {
  // not-user-facing: a kind no folder registered is a programming error (nothing could drive or count such a sweep).
  if (!sweepKindInfo(s.kind)) throw new Error(`No sweep kind ${s.kind} is registered (core/sweeps/kinds.ts)`);
  const now = new Date().toISOString();
  const id = randomUUID().slice(0, 8);
  db.prepare('INSERT INTO sweeps (id, kind, ident, target, query, options, items, state, remote, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').run(
    id, s.kind, s.ident, s.target, s.query, JSON.stringify(s.options ?? {}), JSON.stringify(s.items), 'running', '[]', now, now,
  );
  return getSweep(db, id)!;
}

export function getSweep(db: Db, id: string): SweepRow | null {
  const r = db.prepare('SELECT * FROM sweeps WHERE id = ?').get(id) as Row | undefined;
  return r ? fromRow(r) : null;
}

/** The newest unfinished sweep of the same command (what running it again resumes). */
export function unfinishedSweep(db: Db, ident: string): SweepRow | null {
  const r = db.prepare("SELECT * FROM sweeps WHERE ident = ? AND state = 'running' ORDER BY created_at DESC LIMIT 1").get(ident) as Row | undefined;
  return r ? fromRow(r) : null;
}

/** Its new state, and why it is in it (kept for anyone who looks later; cleared by any other change). */
export function setSweepState(db: Db, id: string, state: SweepState, message: string | null = null): void {
  db.prepare('UPDATE sweeps SET state = ?, message = ?, updated_at = ? WHERE id = ?').run(state, message, new Date().toISOString(), id);
}

/** Writes the process that drives the sweep now (sweepOwner.ts). */
export function setSweepOwner(db: Db, id: string, owner: SweepOwner): void {
  db.prepare('UPDATE sweeps SET owner = ? WHERE id = ?').run(JSON.stringify(owner), id);
}

/** Clears the owner, if it is still this one (a later driver's stays). */
export function clearSweepOwner(db: Db, id: string, owner: SweepOwner): void {
  db.prepare('UPDATE sweeps SET owner = NULL WHERE id = ? AND owner = ?').run(id, JSON.stringify(owner));
}

/** Remembers the engine's handle on a submission (before waiting on it, so a killed workbench finds it). */
export function addRemote(db: Db, id: string, remote: Record<string, unknown>): void {
  const s = getSweep(db, id);
  if (!s) return;
  db.prepare('UPDATE sweeps SET remote = ?, updated_at = ? WHERE id = ?').run(JSON.stringify([...s.remote, remote]), new Date().toISOString(), id);
}

/** Stores a result unless one is there for the key; true when it was new. */
export function addResult(db: Db, sweepId: string, key: string, result: unknown, node: string | null): boolean {
  const r = db.prepare('INSERT OR IGNORE INTO sweep_results (sweep_id, item_key, result, node, created_at) VALUES (?, ?, ?, ?, ?)').run(sweepId, key, JSON.stringify(result), node, new Date().toISOString());
  return r.changes === 1;
}

/** Each item's stored result, as its kind kept it (an audit sweep's are EnvAudits). */
export function sweepResults<T = unknown>(db: Db, sweepId: string): Map<string, T> {
  const rows = db.prepare('SELECT item_key, result FROM sweep_results WHERE sweep_id = ?').all(sweepId) as { item_key: string; result: string }[];
  return new Map(rows.map((r) => [r.item_key, JSON.parse(r.result) as T]));
}

export function resultCount(db: Db, sweepId: string): number {
  return (db.prepare('SELECT COUNT(*) AS n FROM sweep_results WHERE sweep_id = ?').get(sweepId) as { n: number }).n;
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
export function recentSweeps(db: Db, limit: number, kind: SweepKind): SweepRow[] {
  return (db.prepare('SELECT * FROM sweeps WHERE kind = ? ORDER BY created_at DESC, rowid DESC LIMIT ?').all(kind, limit) as Row[]).map(fromRow);
}

/**
 * Results that arrived, and how many of them fail as their kind says (read in SQLite: a pool's
 * results are not parsed to count them).
 */
export function sweepCounts(db: Db, sweepId: string, kind: Pick<SweepKindInfo, 'failingSql'>): { done: number; failed: number } {
  return db.prepare(`SELECT COUNT(*) AS done, COALESCE(SUM(${kind.failingSql}), 0) AS failed FROM sweep_results WHERE sweep_id = ?`).get(sweepId) as { done: number; failed: number };
}

/** An environment version as a sweep's pool holds it: its source and the environment's current hint. */
export interface PoolVersion {
  envId: number;
  hash: string;
  name: string;
  source: string;
  hint: string | null;
}

/** Each version's source and its environment's current hint (a version no longer kept is left out). */
export function targetsFor(db: Db, hashes: readonly string[]): PoolVersion[] {
  const q = db.prepare('SELECT v.hash, v.env_id, v.source, e.name FROM versions v JOIN environments e ON e.id = v.env_id WHERE v.hash = ?');
  const out: PoolVersion[] = [];
  for (const h of hashes) {
    const r = q.get(h) as { hash: string; env_id: number; source: string; name: string } | undefined;
    if (r) out.push({ envId: r.env_id, hash: r.hash, name: r.name, source: r.source, hint: currentHint(db, r.env_id) });
  }
  return out;
}

/** The head version of each environment (of those given, in their order; else of all, by id). */
export function headHashes(db: Db, envIds?: readonly number[]): string[] {
  if (envIds) {
    const q = db.prepare('SELECT head_hash FROM environments WHERE id = ?');
    return envIds.map((id) => (q.get(id) as { head_hash: string } | undefined)?.head_hash).filter((h): h is string => !!h);
  }
  return (db.prepare('SELECT head_hash FROM environments ORDER BY id').all() as { head_hash: string }[]).map((r) => r.head_hash);
}
