import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, migrationChecksum, openDatabase, SchemaError, schemaVersion } from '../../core/memory/db';
import { migrations } from '../../core/memory/migrations';
import { EPISODES_BY_RUN_SQL } from '../../core/episodes/episodeStore';
import { ingest, search } from '../../core/memory/repository';
import { searchableName } from '../../core/memory/parse';
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

  /**
   * A library as the app at schema `v` left it: one environment whose name is CamelCase, indexed
   * the way that app indexed it (split names since schema 2), plus a row in each later table.
   */
  function libraryAt(path: string, v: number): void {
    const db = new Database(path);
    migrate(db, migrations.slice(0, v));
    const now = '2026-01-01T00:00:00.000Z';
    if (v >= 1) db.prepare("INSERT INTO settings (key, value) VALUES ('theme', '\"dark\"')").run();
    if (v >= 2) {
      const source = 'class GridWalkEnv:\n    def reset(self, seed=None):\n        return "start", {}\n';
      db.prepare("INSERT INTO environments (id, name, kind, head_hash, notes, created_at, updated_at) VALUES (1, 'GridWalkEnv', 'game', 'h1', 'old notes', ?, ?)").run(now, now);
      db.prepare('INSERT INTO versions (hash, env_id, source, class_name, bytes, created_at) VALUES (?, 1, ?, ?, ?, ?)').run('h1', source, 'GridWalkEnv', source.length, now);
      db.prepare("INSERT INTO hints (env_id, version_hash, text, created_at) VALUES (1, 'h1', 'go east first', ?)").run(now);
      db.prepare('INSERT INTO env_fts (rowid, name, code, hint, notes) VALUES (1, ?, ?, ?, ?)').run(searchableName('GridWalkEnv'), source, 'go east first', 'old notes');
    }
    if (v >= 3) db.prepare("INSERT INTO jobs (id, name, backend, spec, state, created_at, updated_at) VALUES ('j1', 'run', 'local', '{}', 'done', ?, ?)").run(now, now);
    if (v >= 5) db.prepare("INSERT INTO episodes (env_hash, max_turns, runtime, origin, created_at, updated_at) VALUES ('h1', 5, 'pyodide', 'played', ?, ?)").run(now, now);
    db.close();
  }

  it('upgrades a library from every older schema version to the newest, keeping its rows and its search', () => {
    for (let v = 0; v < migrations.length; v++) {
      const path = dbPath();
      libraryAt(path, v);
      const db = openDatabase(path);
      expect(schemaVersion(db), `from schema ${v}`).toBe(migrations.length);
      if (v >= 1) expect((db.prepare("SELECT value FROM settings WHERE key = 'theme'").get() as { value: string } | undefined)?.value, `from schema ${v}`).toBe('"dark"');
      if (v >= 2) {
        // Found by a word inside its CamelCase name, by its hint and by its notes.
        for (const q of ['walk', 'GridWalkEnv', 'east', 'old notes']) {
          expect(search(db, { query: q }).rows.map((r) => r.name), `"${q}" after upgrading from schema ${v}`).toEqual(['GridWalkEnv']);
        }
      } else {
        ingest(db, { source: 'class GridWalkEnv:\n    pass\n', path: 'x.py' });
        expect(search(db, { query: 'walk' }).rows.map((r) => r.name), `from schema ${v}`).toEqual(['GridWalkEnv']);
      }
      if (v >= 3) expect((db.prepare('SELECT count(*) n FROM jobs').get() as { n: number }).n).toBe(1);
      if (v >= 5) expect((db.prepare('SELECT count(*) n FROM episodes').get() as { n: number }).n).toBe(1);
      const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name);
      expect(tables).not.toContain('imports');
      db.close();
    }
  });

  it('checksums a migration step by name, so the same list always verifies', () => {
    const path = dbPath();
    openDatabase(path).close();
    expect(() => openDatabase(path).close()).not.toThrow();
    const withStep = migrations.find((m) => m.step);
    expect(withStep).toBeDefined();
    expect(migrationChecksum(withStep!)).not.toBe(migrationChecksum({ ...withStep!, step: undefined }));
  });
});

describe('episodes by run', () => {
  it("finds a run's episodes through the episodes_run index, not a scan of every episode", () => {
    const db = openDatabase(dbPath());
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${EPISODES_BY_RUN_SQL}`).all('run-x') as { detail: string }[]).map((r) => r.detail).join('\n');
    expect(plan).toContain('USING INDEX episodes_run');
    db.close();
  });
});
