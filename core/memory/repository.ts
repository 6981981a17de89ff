/**
 * The environment memory's service API. Other features call these with an open Db:
 *
 *   getEnvironment(db, id)                    -> EnvDetail | null   (head source, hints, versions, sightings)
 *   getEnvironmentByHash(db, hash)            -> EnvDetail | null
 *   getVersion(db, hash)                      -> VersionWithSource | null
 *   listVersions(db, envId)                   -> VersionInfo[]      (oldest first; parent links = lineage)
 *   addVersion(db, envId, source, parentHash, message) -> { hash, created }   (the editor's save; never overwrites)
 *   setSeed(db, ids, seed) / tagEnvironments(db, ids, add, remove) / updateEnvironment(db, id, patch)
 *   search(db, { query, filters, sort, offset, limit }) -> { total, rows }      (searchStore.ts)
 *   facets(db, query, filters) / libraryStats(db)                              (facetStore.ts)
 *   selectIds(db, selection) / matchingIds(db, search)                         (searchStore.ts)
 *   ingest(db, candidate, now)                -> 'imported' | 'unchanged' | 'updated'  (ingestStore.ts; used by importer.ts)
 *
 * This file reads and edits one environment; the rest is re-exported from the modules named, so
 * that callers keep one import path. A version is the SHA-256 of its source text (UTF-8).
 */
import type { EnvDetail, VersionInfo } from '../api';
import type { Db } from './db';
import { SUMMARY_COLS, toSummary, toVersion, type EnvRow, type VersionRow } from './envRowStore';
import { currentHint, refreshFts } from './ingestStore';
import { findClassName, sha256 } from './parse';
import { stmt } from './statements';
import { DomainError } from '../errors';

export {
  attachStats,
  currentHint,
  envIdBySourcePrefix,
  envIdOfHash,
  findEnvByStem,
  ingest,
  refreshFts,
  type EnvCandidate,
  type EnvStats,
  type IngestResult,
} from './ingestStore';
export { COUNT_CAP, ftsQuery, matchingIds, search, selectIds, type SearchInput, type Selection } from './searchStore';
export { environmentCount, facets, libraryStats } from './facetStore';

// ---- reading ----

export function getEnvironment(db: Db, id: number): EnvDetail | null {
  const r = stmt(db, `SELECT ${SUMMARY_COLS} FROM environments e WHERE e.id = ?`).get(id) as EnvRow | undefined;
  if (!r) return null;
  const source = (stmt(db, 'SELECT source FROM versions WHERE hash = ?').get(r.head_hash) as { source: string }).source;
  const hints = (
    stmt(db, 'SELECT id, text, origin, version_hash, created_at FROM hints WHERE env_id = ? ORDER BY id').all(id) as {
      id: number;
      text: string;
      origin: string;
      version_hash: string | null;
      created_at: string;
    }[]
  ).map((h) => ({ id: h.id, text: h.text, origin: h.origin, versionHash: h.version_hash, createdAt: h.created_at }));
  const sightings = (
    stmt(db, 'SELECT path, run, rollout_step, job_id, seen_at FROM env_sources WHERE env_id = ? ORDER BY seen_at, path LIMIT 200').all(id) as {
      path: string;
      run: string | null;
      rollout_step: number | null;
      job_id: string | null;
      seen_at: string;
    }[]
  ).map((s) => ({ path: s.path, run: s.run, rolloutStep: s.rollout_step, jobId: s.job_id, seenAt: s.seen_at }));
  return {
    ...toSummary(r),
    notes: r.notes,
    rejectionReason: r.rejection_reason,
    fileStem: r.file_stem,
    sourcePath: r.source_path,
    jobId: r.job_id,
    meta: JSON.parse(r.meta) as Record<string, unknown>,
    createdAt: r.created_at,
    source,
    hint: hints.at(-1)?.text ?? null,
    hints,
    versions: listVersions(db, id),
    sightings,
  };
}

export function getEnvironmentByHash(db: Db, hash: string): EnvDetail | null {
  const v = stmt(db, 'SELECT env_id FROM versions WHERE hash = ?').get(hash) as { env_id: number } | undefined;
  return v ? getEnvironment(db, v.env_id) : null;
}

export type VersionWithSource = VersionInfo & { source: string };
export function getVersion(db: Db, hash: string): VersionWithSource | null {
  const v = stmt(db, 'SELECT * FROM versions WHERE hash = ?').get(hash) as VersionRow | undefined;
  return v ? { ...toVersion(v), source: v.source! } : null;
}

export function listVersions(db: Db, envId: number): VersionInfo[] {
  return (stmt(db, 'SELECT hash, env_id, parent_hash, class_name, bytes, message, created_at FROM versions WHERE env_id = ? ORDER BY created_at, rowid').all(envId) as VersionRow[]).map(
    toVersion,
  );
}

// ---- writing ----

/**
 * The editor's save. The new source becomes the head with `parentHash` as its parent; saving a
 * source this environment already has just moves the head back to it (an undo), adding nothing.
 */
export function addVersion(db: Db, envId: number, source: string, parentHash: string, message = ''): { hash: string; created: boolean } {
  return db.transaction(() => {
    const env = stmt(db, 'SELECT id FROM environments WHERE id = ?').get(envId);
    if (!env) throw new DomainError('not_found', `No environment ${envId}`);
    const parent = stmt(db, 'SELECT env_id FROM versions WHERE hash = ?').get(parentHash) as { env_id: number } | undefined;
    if (!parent || parent.env_id !== envId) throw new DomainError('invalid_input', `Parent ${parentHash.slice(0, 12)} is not a version of environment ${envId}`);
    const hash = sha256(source);
    const now = new Date().toISOString();
    const known = stmt(db, 'SELECT env_id FROM versions WHERE hash = ?').get(hash) as { env_id: number } | undefined;
    if (known && known.env_id !== envId) {
      throw new DomainError('conflict', `This exact source is already stored as environment ${known.env_id}; open that one instead`, { envId: known.env_id, hash });
    }
    if (!known) {
      stmt(db, 'INSERT INTO versions (hash, env_id, parent_hash, source, class_name, bytes, message, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
        hash,
        envId,
        parentHash,
        source,
        findClassName(source),
        Buffer.byteLength(source),
        message,
        now,
      );
    }
    const className = findClassName(source);
    stmt(db, 'UPDATE environments SET head_hash = ?, name = COALESCE(?, name), updated_at = ? WHERE id = ?').run(hash, className, now, envId);
    refreshFts(db, envId);
    return { hash, created: !known };
  }).immediate();
}

export function setSeed(db: Db, ids: number[], seed: boolean): number {
  const now = new Date().toISOString();
  return db.transaction(() => {
    let n = 0;
    for (const id of ids) n += stmt(db, 'UPDATE environments SET seed = ?, updated_at = ? WHERE id = ? AND seed != ?').run(seed ? 1 : 0, now, id, seed ? 1 : 0).changes;
    return n;
  })();
}

export function tagEnvironments(db: Db, ids: number[], add: string[], remove: string[]): number {
  return db.transaction(() => {
    const touched = new Set<number>();
    for (const id of ids) {
      for (const t of add) if (stmt(db, 'INSERT OR IGNORE INTO tags (env_id, tag) SELECT id, ? FROM environments WHERE id = ?').run(t, id).changes) touched.add(id);
      for (const t of remove) if (stmt(db, 'DELETE FROM tags WHERE env_id = ? AND tag = ?').run(id, t).changes) touched.add(id);
    }
    const now = new Date().toISOString();
    for (const id of touched) stmt(db, 'UPDATE environments SET updated_at = ? WHERE id = ?').run(now, id);
    return touched.size;
  })();
}

export interface EnvPatch {
  notes?: string;
  rating?: number | null;
  name?: string;
  skill?: string | null;
  hint?: string;
}

export function updateEnvironment(db: Db, id: number, patch: EnvPatch): EnvDetail {
  db.transaction(() => {
    const row = stmt(db, 'SELECT head_hash FROM environments WHERE id = ?').get(id) as { head_hash: string } | undefined;
    if (!row) throw new DomainError('not_found', `No environment ${id}`);
    const now = new Date().toISOString();
    const sets: string[] = [];
    const vals: unknown[] = [];
    for (const [k, col] of [['notes', 'notes'], ['rating', 'rating'], ['name', 'name'], ['skill', 'skill']] as const) {
      if (patch[k] !== undefined) {
        sets.push(`${col} = ?`);
        vals.push(patch[k]);
      }
    }
    if (patch.hint !== undefined && patch.hint !== currentHint(db, id)) {
      // Re-adding an older hint text makes it current again: delete and insert keeps one row per text.
      stmt(db, 'DELETE FROM hints WHERE env_id = ? AND text = ?').run(id, patch.hint);
      stmt(db, "INSERT INTO hints (env_id, version_hash, text, origin, created_at) VALUES (?, ?, ?, 'user', ?)").run(id, row.head_hash, patch.hint, now);
    }
    stmt(db, `UPDATE environments SET ${[...sets, 'updated_at = ?'].join(', ')} WHERE id = ?`).run(...vals, now, id);
    refreshFts(db, id);
  }).immediate();
  return getEnvironment(db, id)!;
}
