/**
 * What imports write: one candidate in (a new environment, or what is new about a known one), the
 * stats env_memory.json attaches, and the look-ups that find the environment a file or record is
 * about. A version is the SHA-256 of its source text (UTF-8): the same source seen twice is the
 * same version of the same environment, which is what makes every import idempotent.
 */
import { DomainError } from '../errors';
import { hintTooLarge, sourceTooLarge } from '../api/limits';
import type { Db } from './db';
import type { EnvRow } from './envRowStore';
import { detectKind, findClassName, searchableName, sha256 } from './parse';
import { stmt } from './statements';

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
