/**
 * The environment memory's service API. Other features call these with an open Db:
 *
 *   getEnvironment(db, id)                    -> EnvDetail | null   (head source, hints, versions, sightings)
 *   getEnvironmentByHash(db, hash)            -> EnvDetail | null
 *   getVersion(db, hash)                      -> VersionWithSource | null
 *   listVersions(db, envId)                   -> VersionInfo[]      (oldest first; parent links = lineage)
 *   addVersion(db, envId, source, parentHash, message) -> { hash, created }   (the editor's save; never overwrites)
 *   setSeed(db, ids, seed) / tagEnvironments(db, ids, add, remove) / updateEnvironment(db, id, patch)
 *   search(db, { query, filters, sort, offset, limit }) -> { total, rows }
 *   facets(db, query, filters) / libraryStats(db) / selectIds(db, selection)
 *   ingest(db, candidate, now)                -> 'imported' | 'unchanged' | 'updated'  (used by importer.ts)
 *
 * A version is the SHA-256 of its source text (UTF-8). The same source seen twice is the same
 * version of the same environment, which is what makes every import idempotent.
 */
import { type EnvDetail, type EnvSummary, type MemoryFilters, type MemorySort, type VersionInfo } from '../api';
import type { Db } from './db';
import { detectKind, findClassName, searchableName, sha256 } from './parse';
import { stmt } from './statements';
import { DomainError } from '../errors';
import { parseQuery, type ParsedQuery } from './query';
import { hintTooLarge, sourceTooLarge } from '../api/limits';
import { blendParts } from '../api/blendParts';
import { blendSql, hasEstimator } from './blendSql';

export interface EnvStats {
  winRate?: number | null;
  regret?: number | null;
  rHint?: number | null;
  rNoHint?: number | null;
}

/** What an importer found: one environment source plus whatever the files around it said. */
export interface EnvCandidate {
  source: string;
  /** Where it came from, for the sightings list and messages (a file, or `file:line`). */
  path: string;
  name?: string | null;
  kind?: 'game' | 'tool-use' | null;
  skill?: string | null;
  fileStem?: string | null;
  hint?: string | null;
  rejected?: { stage: string | null; reason: string | null } | null;
  validation?: string | null;
  flags?: string[];
  run?: string | null;
  rolloutStep?: number | null;
  jobId?: string | null;
  stats?: EnvStats | null;
  meta?: Record<string, unknown>;
  tags?: string[];
  seed?: boolean;
  notes?: string | null;
  rating?: number | null;
}

export type IngestResult = 'imported' | 'unchanged' | 'updated';

interface EnvRow {
  id: number;
  name: string;
  kind: 'game' | 'tool-use';
  skill: string | null;
  head_hash: string;
  file_stem: string | null;
  seed: number;
  rating: number | null;
  notes: string;
  rejected: number;
  rejection_stage: string | null;
  rejection_reason: string | null;
  validation: string | null;
  flags: string;
  source_path: string | null;
  source_run: string | null;
  rollout_step: number | null;
  job_id: string | null;
  win_rate: number | null;
  regret: number | null;
  r_hint: number | null;
  r_no_hint: number | null;
  meta: string;
  created_at: string;
  updated_at: string;
  tag_list?: string | null;
  measured_json?: string | null;
}

const TAG_SEP = '\u001f';
const SUMMARY_COLS = `e.*, (SELECT group_concat(tag, char(31)) FROM tags t WHERE t.env_id = e.id) AS tag_list`;

/** A string as an SQL literal (quotes doubled): the chosen model joins the statement text, so the
 * statement cache holds one statement per model named, and positional parameters keep their order. */
const sqlText = (s: string) => `'${s.replace(/'/g, "''")}'`;

/**
 * What a model run measured for the head version (migration 12): the newest measurement with a
 * known win rate, by the chosen model (filters.measuredBy) or, with none chosen, by any model.
 * Measured numbers are kept apart from the imported e.win_rate / e.regret a training run recorded.
 */
function measuredExpr(col: string, model: string | undefined): string {
  return `(SELECT ${col} FROM model_run_envs m WHERE m.env_hash = e.head_hash${model ? ` AND m.model = ${sqlText(model)}` : ''} AND m.win_rate IS NOT NULL ORDER BY m.updated_at DESC LIMIT 1)`;
}
// The estimator's label rides along where the regret's store keeps one (hasEstimator).
const measuredJson = (db: Db) =>
  `json_object('model', m.model, 'runId', m.run_id, 'regret', m.regret, 'winRate', m.win_rate, 'rHint', m.r_hint, 'rNoHint', m.r_no_hint, 'seeds', json_array_length(m.seeds), 'failed', m.failed, 'updatedAt', m.updated_at${hasEstimator(db) ? ", 'estimator', m.estimator" : ''})`;
/**
 * The measured column costs one subquery per row (most of memory.search's CPU on a small library);
 * while no model run has measured a win rate it is null for every row, so it is left out. Asked on
 * every search, never remembered: the first measurement shows in the next search.
 */
function summaryCols(db: Db, f: MemoryFilters): string {
  const any = (stmt(db, 'SELECT EXISTS (SELECT 1 FROM model_run_envs WHERE win_rate IS NOT NULL) AS y').get() as { y: number }).y;
  return `${SUMMARY_COLS}, ${any ? measuredExpr(measuredJson(db), f.measuredBy) : 'NULL'} AS measured_json`;
}
const measuredSort = (f: MemoryFilters): Record<'measuredRegret' | 'measuredWinRate' | 'model' | 'difficulty' | 'blend', string> => ({
  measuredRegret: measuredExpr('m.regret', f.measuredBy),
  measuredWinRate: measuredExpr('m.win_rate', f.measuredBy),
  model: measuredExpr('m.model', f.measuredBy),
  difficulty: measuredExpr('1 - abs(m.win_rate - 0.5) / 0.5', f.measuredBy),
  // SPADE's designer blend of the same measurement the Blend column shows (blendSql.ts).
  blend: measuredExpr(blendSql('m.r_no_hint', 'm.regret'), f.measuredBy),
});
function sortExpr(field: Exclude<MemorySort['field'], 'relevance'>, f: MemoryFilters): string {
  return field in sortColumns ? sortColumns[field as keyof typeof sortColumns] : measuredSort(f)[field as keyof ReturnType<typeof measuredSort>];
}

function measuredOf(json: string | null | undefined): EnvSummary['measured'] {
  if (!json) return null;
  // `estimator` is there where model_run_envs keeps one (hasEstimator): the blend names it too.
  const m = JSON.parse(json) as Omit<NonNullable<EnvSummary['measured']>, 'difficulty' | 'frontier' | 'blend'> & { estimator?: unknown };
  const p = m.winRate;
  // The blend's plateau reads the mean unhinted reward (SPADE's win_rate), not this share of wins.
  return { ...m, difficulty: p === null ? null : 1 - Math.abs(p - 0.5) / 0.5, frontier: p !== null && p >= 0.15 && p <= 0.85, blend: blendParts(m.rNoHint, m.regret, m.estimator ?? null) };
}

function toSummary(r: EnvRow): EnvSummary {
  return {
    id: r.id,
    name: r.name,
    kind: r.kind,
    skill: r.skill,
    hash: r.head_hash,
    seed: r.seed === 1,
    rating: r.rating,
    rejected: r.rejected === 1,
    rejectionStage: r.rejection_stage,
    validation: r.validation,
    flags: JSON.parse(r.flags) as string[],
    sourceRun: r.source_run,
    rolloutStep: r.rollout_step,
    winRate: r.win_rate,
    regret: r.regret,
    rHint: r.r_hint,
    rNoHint: r.r_no_hint,
    tags: r.tag_list ? r.tag_list.split(TAG_SEP).sort() : [],
    updatedAt: r.updated_at,
    measured: measuredOf(r.measured_json),
  };
}

interface VersionRow {
  hash: string;
  env_id: number;
  parent_hash: string | null;
  class_name: string | null;
  bytes: number;
  message: string;
  created_at: string;
  source?: string;
}
function toVersion(v: VersionRow): VersionInfo {
  return { hash: v.hash, envId: v.env_id, parentHash: v.parent_hash, className: v.class_name, bytes: v.bytes, message: v.message, createdAt: v.created_at };
}

export function currentHint(db: Db, envId: number): string | null {
  const r = stmt(db, 'SELECT text FROM hints WHERE env_id = ? ORDER BY id DESC LIMIT 1').get(envId) as { text: string } | undefined;
  return r?.text ?? null;
}

/** The FTS row mirrors name, head code, current hint and notes; rewritten whenever one changes. */
export function refreshFts(db: Db, envId: number): void {
  const r = stmt(db, 'SELECT e.name, e.notes, v.source FROM environments e JOIN versions v ON v.hash = e.head_hash WHERE e.id = ?').get(envId) as
    | { name: string; notes: string; source: string }
    | undefined;
  stmt(db, 'DELETE FROM env_fts WHERE rowid = ?').run(envId);
  if (!r) return;
  stmt(db, 'INSERT INTO env_fts (rowid, name, code, hint, notes) VALUES (?, ?, ?, ?, ?)').run(envId, searchableName(r.name), r.source, currentHint(db, envId) ?? '', r.notes);
}

function num(v: number | null | undefined): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/**
 * Adds one candidate. New source: a new environment with its first version. Known source: the
 * environment gains what is new (a sighting, a hint, stats, tags), and nothing is duplicated.
 */
export function ingest(db: Db, c: EnvCandidate, now = new Date().toISOString()): IngestResult {
  // Nothing over the limits the import of an export applies is stored (core/api/limits.ts).
  const tooBig = sourceTooLarge(c.source) ?? (c.hint ? hintTooLarge(c.hint) : null);
  if (tooBig) throw new DomainError('invalid_input', `${c.path}: the ${sourceTooLarge(c.source) ? 'source' : 'hint'} is ${tooBig}`);
  const hash = sha256(c.source);
  const existing = stmt(db, 'SELECT env_id FROM versions WHERE hash = ?').get(hash) as { env_id: number } | undefined;
  if (!existing) {
    const className = findClassName(c.source);
    const kind = c.kind ?? detectKind(c.source);
    const name = c.name || className || c.fileStem || 'UnnamedEnv';
    const s = c.stats ?? {};
    const envId = Number(
      stmt(
        db,
        `INSERT INTO environments (name, kind, skill, head_hash, file_stem, seed, rating, notes, rejected, rejection_stage, rejection_reason,
           validation, flags, source_path, source_run, rollout_step, job_id, win_rate, regret, r_hint, r_no_hint, meta, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        name,
        kind,
        c.skill ?? null,
        hash,
        c.fileStem ?? null,
        c.seed ? 1 : 0,
        c.rating ?? null,
        c.notes ?? '',
        c.rejected ? 1 : 0,
        c.rejected?.stage ?? null,
        c.rejected?.reason ?? null,
        c.validation ?? null,
        JSON.stringify([...new Set(c.flags ?? [])]),
        c.path,
        c.run ?? null,
        c.rolloutStep ?? null,
        c.jobId ?? null,
        num(s.winRate),
        num(s.regret),
        num(s.rHint),
        num(s.rNoHint),
        JSON.stringify(c.meta ?? {}),
        now,
        now,
      ).lastInsertRowid,
    );
    stmt(db, 'INSERT INTO versions (hash, env_id, parent_hash, source, class_name, bytes, message, created_at) VALUES (?, ?, NULL, ?, ?, ?, ?, ?)').run(
      hash,
      envId,
      c.source,
      className,
      Buffer.byteLength(c.source),
      `imported from ${c.path}`,
      now,
    );
    if (c.hint) stmt(db, "INSERT OR IGNORE INTO hints (env_id, version_hash, text, origin, created_at) VALUES (?, ?, ?, 'import', ?)").run(envId, hash, c.hint, now);
    for (const t of c.tags ?? []) stmt(db, 'INSERT OR IGNORE INTO tags (env_id, tag) VALUES (?, ?)').run(envId, t);
    addSighting(db, envId, c, now);
    refreshFts(db, envId);
    return 'imported';
  }

  const envId = existing.env_id;
  const row = stmt(db, 'SELECT * FROM environments WHERE id = ?').get(envId) as EnvRow;
  let changed = false;
  let ftsDirty = false;
  // Where it was seen is provenance, not a change to the environment: re-importing an export of
  // the library (new paths, same everything) is "unchanged", as the person expects.
  addSighting(db, envId, c, now);
  if (c.hint && c.hint !== currentHint(db, envId)) {
    const r = stmt(db, "INSERT OR IGNORE INTO hints (env_id, version_hash, text, origin, created_at) VALUES (?, ?, ?, 'import', ?)").run(envId, hash, c.hint, now);
    if (r.changes) changed = ftsDirty = true;
  }
  for (const t of c.tags ?? []) if (stmt(db, 'INSERT OR IGNORE INTO tags (env_id, tag) VALUES (?, ?)').run(envId, t).changes) changed = true;
  const sets: string[] = [];
  const vals: unknown[] = [];
  const setIf = (col: keyof EnvRow, v: unknown) => {
    if (v === undefined || v === null || row[col] === v) return;
    sets.push(`${col} = ?`);
    vals.push(v);
  };
  if (c.stats) {
    setIf('win_rate', num(c.stats.winRate));
    setIf('regret', num(c.stats.regret));
    setIf('r_hint', num(c.stats.rHint));
    setIf('r_no_hint', num(c.stats.rNoHint));
  }
  if (!row.skill) setIf('skill', c.skill);
  if (!row.file_stem) setIf('file_stem', c.fileStem);
  if (row.rollout_step === null) setIf('rollout_step', c.rolloutStep);
  if (!row.source_run) setIf('source_run', c.run);
  if (!row.validation) setIf('validation', c.validation);
  if (c.seed && !row.seed) setIf('seed', 1);
  if (c.rejected && !row.rejected) {
    setIf('rejected', 1);
    setIf('rejection_stage', c.rejected.stage);
    setIf('rejection_reason', c.rejected.reason);
  }
  if (c.flags?.length) {
    const have = JSON.parse(row.flags) as string[];
    const merged = [...new Set([...have, ...c.flags])];
    if (merged.length !== have.length) setIf('flags', JSON.stringify(merged));
  }
  if (c.meta && Object.keys(c.meta).length) {
    const have = JSON.parse(row.meta) as Record<string, unknown>;
    // A null adds nothing (our tool-use export writes the release's always-null mean_reward and solve_rate).
    const fresh = Object.keys(c.meta).filter((k) => !(k in have) && c.meta![k] !== null && c.meta![k] !== undefined);
    if (fresh.length) setIf('meta', JSON.stringify({ ...have, ...Object.fromEntries(fresh.map((k) => [k, c.meta![k]])) }));
  }
  if (sets.length) {
    stmt(db, `UPDATE environments SET ${sets.join(', ')}, updated_at = ? WHERE id = ?`).run(...vals, now, envId);
    changed = true;
  } else if (changed) {
    stmt(db, 'UPDATE environments SET updated_at = ? WHERE id = ?').run(now, envId);
  }
  if (ftsDirty) refreshFts(db, envId);
  return changed ? 'updated' : 'unchanged';
}

function addSighting(db: Db, envId: number, c: EnvCandidate, now: string): boolean {
  return (
    stmt(db, 'INSERT OR IGNORE INTO env_sources (env_id, path, run, rollout_step, job_id, seen_at) VALUES (?, ?, ?, ?, ?, ?)').run(
      envId,
      c.path,
      c.run ?? null,
      c.rolloutStep ?? null,
      c.jobId ?? null,
      now,
    ).changes > 0
  );
}

/** Stats from env_memory.json attach to a known environment; returns false when nothing changed. */
export function attachStats(db: Db, envId: number, stats: EnvStats, extra: { rolloutStep?: number | null; skill?: string | null } = {}): boolean {
  const row = stmt(db, 'SELECT win_rate, regret, r_hint, r_no_hint, rollout_step, skill FROM environments WHERE id = ?').get(envId) as
    | Pick<EnvRow, 'win_rate' | 'regret' | 'r_hint' | 'r_no_hint' | 'rollout_step' | 'skill'>
    | undefined;
  if (!row) return false;
  const next = {
    win_rate: num(stats.winRate) ?? row.win_rate,
    regret: num(stats.regret) ?? row.regret,
    r_hint: num(stats.rHint) ?? row.r_hint,
    r_no_hint: num(stats.rNoHint) ?? row.r_no_hint,
    rollout_step: row.rollout_step ?? extra.rolloutStep ?? null,
    skill: row.skill ?? extra.skill ?? null,
  };
  if (Object.entries(next).every(([k, v]) => row[k as keyof typeof row] === v)) return false;
  stmt(db, 'UPDATE environments SET win_rate = ?, regret = ?, r_hint = ?, r_no_hint = ?, rollout_step = ?, skill = ?, updated_at = ? WHERE id = ?').run(
    next.win_rate,
    next.regret,
    next.r_hint,
    next.r_no_hint,
    next.rollout_step,
    next.skill,
    new Date().toISOString(),
    envId,
  );
  return true;
}

/** The environment holding the version with this content hash, if any. */
export function envIdOfHash(db: Db, hash: string): number | null {
  const r = stmt(db, 'SELECT env_id FROM versions WHERE hash = ?').get(hash) as { env_id: number } | undefined;
  return r?.env_id ?? null;
}

/** The environment whose source begins with this text (env_memory.json keeps the first 2,000 characters). */
export function envIdBySourcePrefix(db: Db, prefix: string): number | null {
  const r = stmt(db, 'SELECT env_id FROM versions WHERE substr(source, 1, ?) = ? ORDER BY created_at DESC LIMIT 1').get(prefix.length, prefix) as { env_id: number } | undefined;
  return r?.env_id ?? null;
}

export function findEnvByStem(db: Db, stem: string): number | null {
  const r = stmt(db, 'SELECT id FROM environments WHERE file_stem = ? ORDER BY id DESC LIMIT 1').get(stem) as { id: number } | undefined;
  return r?.id ?? null;
}

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

// ---- searching ----

/** User text -> its FTS5 MATCH expression (core/memory/query.ts: words, phrases, operators left out). */
export function ftsQuery(text: string): string | null {
  return parseQuery(text).match;
}

type FilterKey = keyof MemoryFilters;
interface Where {
  sql: string;
  params: unknown[];
}

/**
 * The query's operators (tag:, skill:, seed, verdict:, run:, hash:) and its exact phrases as
 * conditions on `e` (core/memory/query.ts); the FTS match itself is the caller's, which may drive
 * from the FTS table instead.
 */
function queryConds(q: ParsedQuery, parts: string[], params: unknown[]): void {
  for (const t of q.tags) (parts.push('EXISTS (SELECT 1 FROM tags t WHERE t.env_id = e.id AND t.tag = ?)'), params.push(t));
  if (q.skills.length) (parts.push(`e.skill IN (${q.skills.map(() => '?').join(',')})`), params.push(...q.skills));
  if (q.seed) parts.push('e.seed = 1');
  if (q.rejected) parts.push('e.rejected = 1');
  for (const r of q.runs) (parts.push('(e.source_run = ? OR e.job_id = ? OR EXISTS (SELECT 1 FROM env_sources s WHERE s.env_id = e.id AND (s.run = ? OR s.job_id = ?)))'), params.push(r, r, r, r));
  for (const v of q.verdicts) {
    if (v.checkId) (parts.push('EXISTS (SELECT 1 FROM audit_check_status a WHERE a.version_hash = e.head_hash AND a.check_id = ? AND a.status = ?)'), params.push(v.checkId, v.status));
    else (parts.push('EXISTS (SELECT 1 FROM audits a WHERE a.version_hash = e.head_hash AND a.verdict = ?)'), params.push(v.status));
  }
  for (const h of q.hashes) {
    // A hex prefix needs no LIKE escaping; the range keeps it on the primary key's index.
    parts.push('(e.head_hash >= ? AND e.head_hash < ? OR EXISTS (SELECT 1 FROM versions v WHERE v.env_id = e.id AND v.hash >= ? AND v.hash < ?))');
    const hi = `${h}g`;
    params.push(h, hi, h, hi);
  }
  for (const x of q.exact) {
    // FTS5 drops punctuation, so the phrase found candidates; the text itself must be there too.
    parts.push(
      `(instr(lower(e.name), ?) > 0 OR instr(lower(e.notes), ?) > 0
        OR EXISTS (SELECT 1 FROM versions v WHERE v.hash = e.head_hash AND instr(lower(v.source), ?) > 0)
        OR EXISTS (SELECT 1 FROM hints h WHERE h.env_id = e.id AND h.id = (SELECT max(id) FROM hints WHERE env_id = e.id) AND instr(lower(h.text), ?) > 0))`,
    );
    const lx = x.toLowerCase();
    params.push(lx, lx, lx, lx);
  }
}

function buildWhere(query: string | ParsedQuery, f: MemoryFilters, omit?: FilterKey, withFts = true): Where {
  const parts: string[] = [];
  const params: unknown[] = [];
  const q = typeof query === 'string' ? parseQuery(query) : query;
  const fts = withFts ? q.match : null;
  if (fts) {
    parts.push('e.id IN (SELECT rowid FROM env_fts WHERE env_fts MATCH ?)');
    params.push(fts);
  }
  queryConds(q, parts, params);
  const use = (k: FilterKey) => k !== omit && f[k] !== undefined;
  if (use('kind')) (parts.push('e.kind = ?'), params.push(f.kind));
  if (use('skills') && f.skills!.length) (parts.push(`e.skill IN (${f.skills!.map(() => '?').join(',')})`), params.push(...f.skills!));
  if (use('tags')) for (const t of f.tags!) (parts.push('EXISTS (SELECT 1 FROM tags t WHERE t.env_id = e.id AND t.tag = ?)'), params.push(t));
  if (use('seed')) (parts.push('e.seed = ?'), params.push(f.seed ? 1 : 0));
  if (use('rejected')) (parts.push('e.rejected = ?'), params.push(f.rejected ? 1 : 0));
  if (use('rejectionStage')) (parts.push('e.rejection_stage = ?'), params.push(f.rejectionStage));
  if (use('validation')) (parts.push('e.validation = ?'), params.push(f.validation));
  if (use('flagged')) parts.push(f.flagged ? "e.flags != '[]'" : "e.flags = '[]'");
  if (use('run')) (parts.push('(e.source_run = ? OR EXISTS (SELECT 1 FROM env_sources s WHERE s.env_id = e.id AND s.run = ?))'), params.push(f.run, f.run));
  if (use('jobId')) (parts.push('(e.job_id = ? OR EXISTS (SELECT 1 FROM env_sources s WHERE s.env_id = e.id AND s.job_id = ?))'), params.push(f.jobId, f.jobId));
  if (use('source')) {
    const prefix = f.source!.replace(/[\\%_]/g, (c) => `\\${c}`);
    parts.push("EXISTS (SELECT 1 FROM env_sources s WHERE s.env_id = e.id AND s.path LIKE ? ESCAPE '\\')");
    params.push(`${prefix}%`);
  }
  if (use('audit')) {
    const a = f.audit!;
    if (a.checkId) {
      parts.push('EXISTS (SELECT 1 FROM audit_check_status a WHERE a.version_hash = e.head_hash AND a.check_id = ? AND a.status = ?)');
      params.push(a.checkId, a.status);
    } else (parts.push('EXISTS (SELECT 1 FROM audits a WHERE a.version_hash = e.head_hash AND a.verdict = ?)'), params.push(a.status));
  }
  const ranges: [FilterKey, string][] = [
    ['winRate', 'e.win_rate'],
    ['regret', 'e.regret'],
    ['rHint', 'e.r_hint'],
    ['rNoHint', 'e.r_no_hint'],
    ['rating', 'e.rating'],
    ['rolloutStep', 'e.rollout_step'],
  ];
  // SPADE's frontier band for the chosen model's measured win rate (its designer samples 0.15-0.85).
  if (use('frontier')) parts.push(f.frontier ? `${measuredExpr('m.win_rate', f.measuredBy)} BETWEEN 0.15 AND 0.85` : `COALESCE(${measuredExpr('m.win_rate', f.measuredBy)} NOT BETWEEN 0.15 AND 0.85, 1)`);
  for (const [k, col] of ranges) {
    if (!use(k)) continue;
    const r = f[k] as { min?: number; max?: number };
    if (r.min !== undefined) (parts.push(`${col} >= ?`), params.push(r.min));
    if (r.max !== undefined) (parts.push(`${col} <= ?`), params.push(r.max));
  }
  return { sql: parts.length ? `WHERE ${parts.join(' AND ')}` : '', params };
}

const sortColumns: Record<Exclude<MemorySort['field'], 'relevance' | 'measuredRegret' | 'measuredWinRate' | 'model' | 'difficulty' | 'blend'>, string> = {
  name: 'e.name COLLATE NOCASE',
  skill: 'e.skill',
  kind: 'e.kind',
  updated: 'e.updated_at',
  created: 'e.id',
  regret: 'e.regret',
  winRate: 'e.win_rate',
  rHint: 'e.r_hint',
  rNoHint: 'e.r_no_hint',
  rating: 'e.rating',
  rolloutStep: 'e.rollout_step',
};

export interface SearchInput {
  query?: string;
  filters?: MemoryFilters;
  sort?: MemorySort;
  offset?: number;
  limit?: number;
}

/** Counting stops here: "10,000+ matches" says enough and keeps broad searches fast. */
export const COUNT_CAP = 10_000;
/** bm25 ranking costs per match; above this many, a query lists newest first instead. */
const RANK_LIMIT = 2_000;

export function search(db: Db, input: SearchInput): { total: number; capped: boolean; rows: EnvSummary[] } {
  const query = input.query ?? '';
  const filters = input.filters ?? {};
  const limit = input.limit ?? 100;
  const offset = input.offset ?? 0;
  const parsed = parseQuery(query);
  const fts = parsed.match;
  // A sort chosen outside the query (a column header, --sort) wins; else the query's `sort:`.
  const chosen = input.sort && input.sort.field !== 'relevance' ? input.sort : (parsed.sort ?? input.sort);
  if (!fts) {
    const where = buildWhere(parsed, filters);
    const field = chosen && chosen.field !== 'relevance' ? chosen.field : 'created';
    const dir = chosen && chosen.field !== 'relevance' && chosen.dir === 'asc' ? 'ASC' : 'DESC';
    const rows = stmt(db, `SELECT ${summaryCols(db, filters)} FROM environments e ${where.sql} ORDER BY ${sortExpr(field, filters)} ${dir} NULLS LAST, e.id ${dir} LIMIT ? OFFSET ?`).all(
      ...where.params,
      limit,
      offset,
    ) as EnvRow[];
    const total = (stmt(db, `SELECT count(*) AS n FROM environments e ${where.sql}`).get(...where.params) as { n: number }).n;
    return { total, capped: false, rows: rows.map(toSummary) };
  }
  // The FTS table drives: its doclist is already in rowid order, and the filters are checked per match.
  const rest = buildWhere(parsed, filters, undefined, false);
  const and = rest.sql ? `AND ${rest.sql.slice('WHERE '.length)}` : '';
  const n = (
    stmt(db, `SELECT count(*) AS n FROM (SELECT 1 FROM env_fts f JOIN environments e ON e.id = f.rowid WHERE env_fts MATCH ? ${and} LIMIT ${COUNT_CAP + 1})`).get(fts, ...rest.params) as {
      n: number;
    }
  ).n;
  const capped = n > COUNT_CAP;
  const total = Math.min(n, COUNT_CAP);
  const sort = chosen ?? { field: 'relevance' as const, dir: 'asc' as const };
  let rows: EnvRow[];
  if (sort.field === 'relevance' && n <= RANK_LIMIT) {
    rows = stmt(
      db,
      `SELECT ${summaryCols(db, filters)} FROM env_fts f JOIN environments e ON e.id = f.rowid WHERE env_fts MATCH ? ${and} ORDER BY f.rank ${sort.dir === 'desc' ? 'DESC' : 'ASC'}, e.id DESC LIMIT ? OFFSET ?`,
    ).all(fts, ...rest.params, limit, offset) as EnvRow[];
  } else if (sort.field === 'relevance' || sort.field === 'created') {
    const dir = sort.field === 'created' && sort.dir === 'asc' ? 'ASC' : 'DESC';
    rows = stmt(db, `SELECT ${summaryCols(db, filters)} FROM env_fts f JOIN environments e ON e.id = f.rowid WHERE env_fts MATCH ? ${and} ORDER BY f.rowid ${dir} LIMIT ? OFFSET ?`).all(
      fts,
      ...rest.params,
      limit,
      offset,
    ) as EnvRow[];
  } else {
    const where = buildWhere(parsed, filters);
    const dir = sort.dir === 'asc' ? 'ASC' : 'DESC';
    rows = stmt(db, `SELECT ${summaryCols(db, filters)} FROM environments e ${where.sql} ORDER BY ${sortExpr(sort.field as Exclude<MemorySort['field'], 'relevance'>, filters)} ${dir} NULLS LAST, e.id ${dir} LIMIT ? OFFSET ?`).all(
      ...where.params,
      limit,
      offset,
    ) as EnvRow[];
  }
  return { total, capped, rows: rows.map(toSummary) };
}

/** Every id a search matches (newest first), for bulk actions on "all matching"; at most `max`. */
export function matchingIds(db: Db, input: { query?: string; filters?: MemoryFilters }, max = 100_000): { ids: number[]; truncated: boolean } {
  const query = input.query ?? '';
  const where = buildWhere(query, input.filters ?? {});
  const ids = (stmt(db, `SELECT e.id FROM environments e ${where.sql} ORDER BY e.id DESC LIMIT ?`).all(...where.params, max + 1) as { id: number }[]).map((r) => r.id);
  return { ids: ids.slice(0, max), truncated: ids.length > max };
}

export interface Selection {
  ids?: number[];
  seeds?: boolean;
  tag?: string;
  query?: string;
  filters?: MemoryFilters;
}

/** Resolves an export/bulk selection to ids, in a stable order (oldest first). */
export function selectIds(db: Db, sel: Selection): number[] {
  if (sel.ids) return [...new Set(sel.ids)];
  const filters: MemoryFilters = { ...(sel.filters ?? {}) };
  if (sel.seeds) filters.seed = true;
  if (sel.tag) filters.tags = [...(filters.tags ?? []), sel.tag];
  const where = buildWhere(sel.query ?? '', filters);
  return (db.prepare(`SELECT e.id FROM environments e ${where.sql} ORDER BY e.id`).all(...where.params) as { id: number }[]).map((r) => r.id);
}

type Facet = { value: string; count: number }[];
function groupCount(db: Db, w: Where, expr: string, from = 'environments e', limit = 100): Facet {
  return stmt(
    db,
    `SELECT ${expr} AS value, count(*) AS count FROM ${from} ${w.sql ? `${w.sql} AND` : 'WHERE'} ${expr} IS NOT NULL GROUP BY value ORDER BY count DESC, value LIMIT ${limit}`,
  ).all(...w.params) as Facet;
}

export function facets(db: Db, query: string, f: MemoryFilters) {
  const count = (w: Where) => (stmt(db, `SELECT count(*) AS n FROM environments e ${w.sql}`).get(...w.params) as { n: number }).n;
  const seedW = buildWhere(query, { ...f, seed: true }, undefined);
  const rejW = buildWhere(query, { ...f, rejected: true }, undefined);
  return {
    kinds: groupCount(db, buildWhere(query, f, 'kind'), 'e.kind'),
    skills: groupCount(db, buildWhere(query, f, 'skills'), 'e.skill'),
    tags: groupCount(db, buildWhere(query, f, 'tags'), 't.tag', 'environments e JOIN tags t ON t.env_id = e.id', 50),
    runs: runFacet(db, buildWhere(query, f, 'run')),
    validation: groupCount(db, buildWhere(query, f, 'validation'), 'e.validation'),
    rejectionStages: groupCount(db, buildWhere(query, f, 'rejectionStage'), 'e.rejection_stage'),
    seeds: count(seedW),
    rejected: count(rejW),
    audit: auditFacet(db, buildWhere(query, f, 'audit')),
  };
}

/**
 * Runs by their name: a job's imports are filed under its id (unique, what the filter takes), and
 * the label is the name the person gave the job. Imports with `--run NAME` have no job: no label.
 */
function runFacet(db: Db, w: Where): (Facet[number] & { label: string | null })[] {
  return stmt(
    db,
    `SELECT e.source_run AS value, count(*) AS count, (SELECT j.name FROM jobs j WHERE j.id = e.source_run) AS label
     FROM environments e ${w.sql ? `${w.sql} AND` : 'WHERE'} e.source_run IS NOT NULL GROUP BY value ORDER BY count DESC, value LIMIT 50`,
  ).all(...w.params) as (Facet[number] & { label: string | null })[];
}

/** The stored audit of each head version: verdicts, and how many fail each check. */
function auditFacet(db: Db, w: Where): { verdicts: Facet; failing: Facet } {
  return {
    verdicts: groupCount(db, w, 'a.verdict', 'environments e JOIN audits a ON a.version_hash = e.head_hash'),
    failing: groupCount(db, w, 's.check_id', "environments e JOIN audit_check_status s ON s.version_hash = e.head_hash AND s.status = 'fail'"),
  };
}

export function libraryStats(db: Db) {
  const one = (sql: string) => (stmt(db, sql).get() as { n: number }).n;
  const pageCount = db.pragma('page_count', { simple: true }) as number;
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  return {
    environments: one('SELECT count(*) AS n FROM environments'),
    versions: one('SELECT count(*) AS n FROM versions'),
    hints: one('SELECT count(*) AS n FROM hints'),
    seeds: one('SELECT count(*) AS n FROM environments WHERE seed = 1'),
    rejected: one('SELECT count(*) AS n FROM environments WHERE rejected = 1'),
    flagged: one("SELECT count(*) AS n FROM environments WHERE flags != '[]'"),
    byKind: stmt(db, 'SELECT kind AS value, count(*) AS count FROM environments GROUP BY kind ORDER BY count DESC').all() as Facet,
    bySkill: stmt(db, "SELECT COALESCE(skill, '(none)') AS value, count(*) AS count FROM environments GROUP BY skill ORDER BY count DESC").all() as Facet,
    databaseBytes: pageCount * pageSize,
  };
}

export function environmentCount(db: Db): number {
  return (stmt(db, 'SELECT count(*) AS n FROM environments').get() as { n: number }).n;
}
