import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { migrations as allMigrations, migrationSteps, type Migration } from './migrations';
import { DomainError } from '../errors';

export type Db = Database.Database;

/** A database this app must not touch (newer schema, altered migrations): nothing is written to it. */
export class SchemaError extends DomainError {
  constructor(message: string) {
    super('conflict', message);
    this.name = 'SchemaError';
  }
}

export function migrationChecksum(m: Migration): string {
  return createHash('sha256').update(m.step ? `${m.sql}\n-- step: ${m.step}` : m.sql).digest('hex');
}

export interface OpenOptions {
  /** Where Electron keeps its own build of the native module (see scripts/electron-native.mjs). */
  nativeBinding?: string;
  migrations?: Migration[];
  readonly?: boolean;
}

/**
 * Opens (creating if needed) the workbench database: WAL so readers never block the writer,
 * foreign keys on, and every pending migration applied in one transaction so a crash mid-way
 * leaves the previous schema intact.
 */
export function openDatabase(path: string, opts: OpenOptions = {}): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const nativeBinding = opts.nativeBinding ?? process.env.SPADE_SQLITE_BINDING;
  const db = new Database(path, {
    ...(nativeBinding ? { nativeBinding } : {}),
    ...(opts.readonly ? { readonly: true, fileMustExist: true } : {}),
  });
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    if (!opts.readonly) migrate(db, opts.migrations ?? allMigrations, path);
  } catch (e) {
    db.close();
    throw e;
  }
  return db;
}

export function schemaVersion(db: Db): number {
  const row = db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null };
  return row.v ?? 0;
}

export function migrate(db: Db, list: Migration[], label = 'database'): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    checksum TEXT NOT NULL,
    applied_at TEXT NOT NULL
  ) STRICT`);
  const sorted = [...list].sort((a, b) => a.version - b.version);
  sorted.forEach((m, i) => {
    if (m.version !== i + 1) throw new SchemaError(`Migration list is not numbered 1..n (found ${m.version} at ${i + 1})`);
  });
  const latest = sorted.length;
  const applied = db.prepare('SELECT version, name, checksum FROM schema_migrations ORDER BY version').all() as {
    version: number;
    name: string;
    checksum: string;
  }[];
  const newest = applied.at(-1)?.version ?? 0;
  if (newest > latest) {
    throw new SchemaError(
      `The ${label} was written by a newer SPADE Workbench (schema ${newest}; this app knows up to ${latest}). ` +
        'Update the app, or point it at another data directory; the file was left untouched.',
    );
  }
  for (const row of applied) {
    const known = sorted[row.version - 1];
    if (known && migrationChecksum(known) !== row.checksum) {
      throw new SchemaError(
        `Migration ${row.version} (${row.name}) in the ${label} does not match this app's copy (checksum differs); refusing to continue.`,
      );
    }
  }
  const pending = sorted.filter((m) => m.version > newest);
  if (pending.length === 0) return;
  const record = db.prepare('INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)');
  db.transaction(() => {
    for (const m of pending) {
      db.exec(m.sql);
      if (m.step) migrationSteps[m.step](db);
      record.run(m.version, m.name, migrationChecksum(m), new Date().toISOString());
    }
  }).immediate();
}
