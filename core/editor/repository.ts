/**
 * The editor's own rows (drafts) and the few version lookups it needs, as SQL in one place.
 * Environments and versions themselves are written through memory/repository.
 */
import type { Draft } from '../api/calls/editor';
import type { Db } from '../memory/db';
import { sha256 } from '../memory/parse';
import { envIdOfHash } from '../memory/repository';
import { stmt } from '../memory/statements';

interface DraftRow {
  env_id: number;
  base_hash: string | null;
  source: string;
  hint: string | null;
  updated_at: string;
}

export function loadDraft(db: Db, envId: number): Draft | null {
  const r = stmt(db, 'SELECT env_id, base_hash, source, hint, updated_at FROM drafts WHERE env_id = ?').get(envId) as DraftRow | undefined;
  return r ? { envId: r.env_id, baseHash: r.base_hash, source: r.source, hint: r.hint, updatedAt: r.updated_at } : null;
}

export function listDrafts(db: Db): { envId: number; name: string; baseHash: string | null; updatedAt: string }[] {
  const rows = stmt(db, 'SELECT d.env_id, e.name, d.base_hash, d.updated_at FROM drafts d JOIN environments e ON e.id = d.env_id ORDER BY d.updated_at DESC').all() as {
    env_id: number;
    name: string;
    base_hash: string | null;
    updated_at: string;
  }[];
  return rows.map((r) => ({ envId: r.env_id, name: r.name, baseHash: r.base_hash, updatedAt: r.updated_at }));
}

export function saveDraft(db: Db, d: { envId: number; baseHash: string; source: string; hint: string | null; updatedAt: string }): void {
  stmt(
    db,
    `INSERT INTO drafts (env_id, base_hash, source, hint, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (env_id) DO UPDATE SET base_hash = excluded.base_hash, source = excluded.source, hint = excluded.hint, updated_at = excluded.updated_at`,
  ).run(d.envId, d.baseHash, d.source, d.hint, d.updatedAt);
}

export function deleteDraft(db: Db, envId: number): boolean {
  return stmt(db, 'DELETE FROM drafts WHERE env_id = ?').run(envId).changes > 0;
}

/** The head version's hash, or null when there is no such environment. */
export function headHash(db: Db, envId: number): string | null {
  const r = stmt(db, 'SELECT head_hash FROM environments WHERE id = ?').get(envId) as { head_hash: string } | undefined;
  return r?.head_hash ?? null;
}

/** Which environment already holds this exact source (versions are content-addressed), if any. */
export function envWithSource(db: Db, source: string): number | null {
  return envIdOfHash(db, sha256(source));
}

export function setVersionMessage(db: Db, hash: string, message: string): void {
  stmt(db, 'UPDATE versions SET message = ? WHERE hash = ?').run(message, hash);
}
