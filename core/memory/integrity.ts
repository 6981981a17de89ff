import { errorMessage } from '../api/errorMessage';
import type { Db } from './db';

export interface IntegrityReport {
  checked: 'quick' | 'full';
  ok: boolean;
  /** SQLite's own lines ("Tree 2 page 185 cell 11: Extends off end of page"), at most MAX_PROBLEMS. */
  problems: string[];
  /** SQLite stopped listing at the limit: there are at least this many. */
  truncated: boolean;
  checkedAt: string;
}

const MAX_PROBLEMS = 50;

/**
 * Runs SQLite's structural check. `quick` (at every open) reads every page but skips the index
 * cross-checks; `full` (on demand) is integrity_check, which also proves indexes match their tables.
 * A damaged file otherwise keeps answering, just with rows missing.
 */
export function checkIntegrity(db: Db, checked: 'quick' | 'full'): IntegrityReport {
  const checkedAt = new Date().toISOString();
  let lines: string[];
  try {
    const rows = db.pragma(`${checked === 'full' ? 'integrity_check' : 'quick_check'}(${MAX_PROBLEMS})`) as Record<string, string>[];
    lines = rows.flatMap((r) => String(Object.values(r)[0] ?? '').split('\n')).filter((l) => l && !l.startsWith('*** in database'));
  } catch (e) {
    // "database disk image is malformed" can come from the check itself.
    lines = [errorMessage(e)];
  }
  const ok = lines.length === 1 && lines[0] === 'ok';
  return { checked, ok, problems: ok ? [] : lines.slice(0, MAX_PROBLEMS), truncated: !ok && lines.length >= MAX_PROBLEMS, checkedAt };
}

/**
 * Writes to a damaged file can spread the damage, so they are paused (SQLite's query_only) until the
 * user decides: check fully, export what is readable, or write anyway.
 */
export function pauseWrites(db: Db, paused: boolean): void {
  db.pragma(`query_only = ${paused ? 'ON' : 'OFF'}`);
}

/** The error SQLite raises for a write while query_only is on. */
export function isWriteRefused(e: unknown): boolean {
  return e instanceof Error && (e as Error & { code?: unknown }).code === 'SQLITE_READONLY';
}
