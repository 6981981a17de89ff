import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, openDatabase, SchemaError, schemaVersion } from '../../core/memory/db';
import { migrations } from '../../core/memory/migrations';
import { tempDir } from '../helpers/tmp';

const tmps: { cleanup(): void }[] = [];
afterEach(() => tmps.splice(0).forEach((t) => t.cleanup()));
function dbPath(): string {
  const t = tempDir();
  tmps.push(t);
  return join(t.dir, 'w.sqlite');
}

describe('migrations', () => {
  it('applies every migration once, records checksums, and uses WAL with foreign keys', () => {
    const path = dbPath();
    const db = openDatabase(path);
    expect(schemaVersion(db)).toBe(migrations.length);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    const rows = db.prepare('SELECT version, checksum FROM schema_migrations').all() as { checksum: string }[];
    expect(rows).toHaveLength(migrations.length);
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.checksum))).toBe(true);
    db.close();
    const again = openDatabase(path);
    expect(schemaVersion(again)).toBe(migrations.length);
    again.close();
  });

  it('refuses a database written by a newer app and leaves it untouched', () => {
    const path = dbPath();
    openDatabase(path).close();
    const raw = new Database(path);
    raw.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?, ?)').run(migrations.length + 5, 'future', 'x'.repeat(64), 'now');
    raw.close();
    expect(() => openDatabase(path)).toThrow(SchemaError);
    expect(() => openDatabase(path)).toThrow(/newer SPADE Workbench/);
    const check = new Database(path);
    expect((check.prepare('SELECT MAX(version) v FROM schema_migrations').get() as { v: number }).v).toBe(migrations.length + 5);
    check.close();
  });

  it('refuses an applied migration whose text changed', () => {
    const path = dbPath();
    const db = new Database(path);
    migrate(db, [{ version: 1, name: 'a', sql: 'CREATE TABLE a (x INTEGER);' }]);
    expect(() => migrate(db, [{ version: 1, name: 'a', sql: 'CREATE TABLE a (y INTEGER);' }])).toThrow(/checksum differs/);
    db.close();
  });

  it('applies pending migrations in one transaction: a failing one leaves the old schema', () => {
    const path = dbPath();
    const db = new Database(path);
    migrate(db, [{ version: 1, name: 'a', sql: 'CREATE TABLE a (x INTEGER);' }]);
    expect(() =>
      migrate(db, [
        { version: 1, name: 'a', sql: 'CREATE TABLE a (x INTEGER);' },
        { version: 2, name: 'b', sql: 'CREATE TABLE b (x INTEGER);' },
        { version: 3, name: 'c', sql: 'CREATE TABLE broken (' },
      ]),
    ).toThrow();
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type='table'").all() as { name: string }[]).map((r) => r.name);
    expect(tables).not.toContain('b');
    expect((db.prepare('SELECT MAX(version) v FROM schema_migrations').get() as { v: number }).v).toBe(1);
    db.close();
  });
});
