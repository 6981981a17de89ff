import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, schemaVersion, type Db } from '../../core/memory/db';
import { migrations } from '../../core/memory/migrations';
import { getSweep, recentSweeps, sweepCounts, sweepResults, addResult, createSweep } from '../../core/sweeps/sweepStore';
import { auditSweeps } from '../../core/audit/auditStore';
import { regretSweeps } from '../../core/episodes/regretRemote';
import { tempDir } from '../helpers/tmp';

/**
 * The sweep tables as the sweep store made them on first use before they had a migration
 * (core/audit/dispatch/sweepStore.ts at 75927aa, `tables()`): this is the "before" shape the
 * migration carries rows out of. Copied, not imported: that code no longer exists.
 */
const BEFORE_TABLES = `CREATE TABLE IF NOT EXISTS audit_sweeps (
    id TEXT PRIMARY KEY, ident TEXT NOT NULL, target TEXT NOT NULL, query TEXT NOT NULL, options TEXT NOT NULL,
    items TEXT NOT NULL, state TEXT NOT NULL, remote TEXT NOT NULL DEFAULT '[]', created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
  CREATE INDEX IF NOT EXISTS audit_sweeps_ident ON audit_sweeps (ident, created_at);
  CREATE TABLE IF NOT EXISTS audit_sweep_results (
    sweep_id TEXT NOT NULL REFERENCES audit_sweeps(id) ON DELETE CASCADE, item_key TEXT NOT NULL, audit TEXT NOT NULL,
    node TEXT, created_at TEXT NOT NULL, PRIMARY KEY (sweep_id, item_key));`;
/** The columns that code added to a table made before them, in the order it added them. */
const ADDED = {
  kind: "ALTER TABLE audit_sweeps ADD COLUMN kind TEXT NOT NULL DEFAULT 'audit'",
  owner: 'ALTER TABLE audit_sweeps ADD COLUMN owner TEXT',
  message: 'ALTER TABLE audit_sweeps ADD COLUMN message TEXT',
} as const;
type Added = keyof typeof ADDED;

const sweepsMigration = migrations.find((m) => m.step === 'carrySweepTables')!;
const before = migrations.filter((m) => m.version < sweepsMigration.version);

const tmps: { cleanup(): void }[] = [];
afterEach(() => tmps.splice(0).forEach((t) => t.cleanup()));

/** A memory file at the schema before the sweep migration, with the old tables (and the added columns given) made as the old store made them. */
function oldDatabase(added: readonly Added[] | null): string {
  const t = tempDir();
  tmps.push(t);
  const path = join(t.dir, 'w.sqlite');
  const db = openDatabase(path, { migrations: before });
  if (added) {
    db.exec(BEFORE_TABLES);
    for (const c of added) db.exec(ADDED[c]);
  }
  db.close();
  return path;
}

const passing = { checks: [{ id: 'spade.load', status: 'pass' }] };
const failing = { checks: [{ id: 'spade.load', status: 'pass' }, { id: 'spade.reset', status: 'fail' }] };
const owner = { host: 'h', pid: 4242, start: '77' };
const items = [{ key: 'a:1', file: 'memory:1', sha256: 'a', name: 'A', hint: null }];

/** Rows the old store would have written, with the columns that table has. */
function fill(path: string, added: readonly Added[]): void {
  const raw = new Database(path);
  raw.pragma('foreign_keys = ON');
  const cols = ['id', 'ident', 'target', 'query', 'options', 'items', 'state', 'remote', 'created_at', 'updated_at', ...added];
  const ins = raw.prepare(`INSERT INTO audit_sweeps (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`);
  const extra = (kind: string, o: unknown, m: string | null) => added.map((c) => (c === 'kind' ? kind : c === 'owner' ? (o ? JSON.stringify(o) : null) : m));
  // Same created_at for s1 and s2: "newest first" falls back to the order they were written in.
  ins.run('s1', 'i1', 'local', 'q', '{"audit":{}}', JSON.stringify(items), 'done', '[]', '2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z', ...extra('audit', null, null));
  ins.run('s2', 'i2', 'ray://h:8265', 'q2', '{}', JSON.stringify(items), 'running', '[{"kind":"ray","submissionId":"x"}]', '2026-01-01T00:00:00Z', '2026-01-01T00:02:00Z', ...extra('audit', owner, null));
  ins.run('s3', 'i3', 'slurm:h', 'q3', '{"runId":"r"}', '[]', 'failed', '[]', '2026-01-02T00:00:00Z', '2026-01-02T00:00:00Z', ...extra('regret', null, 'sbatch failed'));
  const res = raw.prepare('INSERT INTO audit_sweep_results (sweep_id, item_key, audit, node, created_at) VALUES (?, ?, ?, ?, ?)');
  res.run('s1', 'a:1', JSON.stringify(passing), null, '2026-01-01T00:00:30Z');
  res.run('s2', 'a:1', JSON.stringify(failing), 'node-3', '2026-01-01T00:01:30Z');
  res.run('s3', 'a:1|hint|0', JSON.stringify({ failed: true }), 'n', '2026-01-02T00:00:10Z');
  raw.close();
}

function columns(db: Db, table: string): string[] {
  return (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
}
function tableNames(db: Db): string[] {
  return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '%sweep%' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
}

describe('sweep tables by migration', () => {
  it('leaves making the tables to the migration: before it, the store finds none and makes none', () => {
    const path = oldDatabase(null);
    const db = openDatabase(path, { migrations: before });
    try {
      expect(() => getSweep(db, 'x')).toThrow(/no such table: sweeps/);
      expect(tableNames(db)).toEqual([]);
    } finally {
      db.close();
    }
  });

  it.each<[string, Added[]]>([
    ['every column the store added', ['kind', 'owner', 'message']],
    ['kind and owner, no message yet', ['kind', 'owner']],
    ['kind only', ['kind']],
    ['the first shape, before any added column', []],
  ])('carries over every row of tables with %s', (_, added) => {
    const path = oldDatabase(added);
    fill(path, added);
    const db = openDatabase(path);
    try {
      expect(schemaVersion(db)).toBe(migrations.length);
      expect(tableNames(db)).toEqual(['sweep_results', 'sweeps']);
      expect(columns(db, 'sweeps')).toEqual(['id', 'kind', 'ident', 'target', 'query', 'options', 'items', 'state', 'remote', 'owner', 'message', 'created_at', 'updated_at']);
      expect(columns(db, 'sweep_results')).toEqual(['sweep_id', 'item_key', 'result', 'node', 'created_at']);
      const has = (c: Added) => added.includes(c);
      const s1 = getSweep(db, 's1')!;
      expect(s1).toMatchObject({ kind: 'audit', ident: 'i1', target: 'local', query: 'q', options: { audit: {} }, items, state: 'done', remote: [], owner: null, message: null, createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:01:00Z' });
      expect(getSweep(db, 's2')).toMatchObject({ state: 'running', remote: [{ kind: 'ray', submissionId: 'x' }], owner: has('owner') ? owner : null });
      // A table without `kind` held audits only (the column came with regret sweeps).
      expect(getSweep(db, 's3')).toMatchObject({ kind: has('kind') ? 'regret' : 'audit', state: 'failed', message: has('message') ? 'sbatch failed' : null });
      expect(recentSweeps(db, 10, auditSweeps.kind).map((s) => s.id)).toEqual(has('kind') ? ['s2', 's1'] : ['s3', 's2', 's1']);
      expect(sweepResults(db, 's1')).toEqual(new Map([['a:1', passing]]));
      expect(db.prepare("SELECT node, created_at FROM sweep_results WHERE sweep_id = 's2'").get()).toEqual({ node: 'node-3', created_at: '2026-01-01T00:01:30Z' });
      expect(sweepCounts(db, 's2', auditSweeps)).toEqual({ done: 1, failed: 1 });
      expect(sweepCounts(db, 's1', auditSweeps)).toEqual({ done: 1, failed: 0 });
      expect(sweepCounts(db, 's3', regretSweeps)).toEqual({ done: 1, failed: 1 });
      // A result that comes again still counts once, and a deleted sweep takes its results with it.
      expect(addResult(db, 's1', 'a:1', passing, null)).toBe(false);
      db.prepare("DELETE FROM sweeps WHERE id = 's1'").run();
      expect(sweepResults(db, 's1').size).toBe(0);
    } finally {
      db.close();
    }
  });

  it('makes the tables in a memory file that never ran a sweep, and the store uses them', () => {
    const db = openDatabase(oldDatabase(null));
    try {
      expect(tableNames(db)).toEqual(['sweep_results', 'sweeps']);
      const s = createSweep(db, { kind: regretSweeps.kind, ident: 'i', target: 'local', query: '', options: {}, items: [] });
      expect(addResult(db, s.id, 'k', { failed: false }, null)).toBe(true);
      expect(sweepCounts(db, s.id, regretSweeps)).toEqual({ done: 1, failed: 0 });
    } finally {
      db.close();
    }
  });

  it('refuses an audit_sweeps table that is not the workbench’s, and leaves the file as it was', () => {
    const path = oldDatabase(null);
    const raw = new Database(path);
    raw.exec("CREATE TABLE audit_sweeps (id TEXT PRIMARY KEY, note TEXT); INSERT INTO audit_sweeps VALUES ('x', 'mine')");
    raw.close();
    expect(() => openDatabase(path)).toThrow(/audit_sweeps in this database is not the workbench's \(no column ident/);
    const after = new Database(path, { readonly: true });
    try {
      expect(schemaVersion(after)).toBe(before.length);
      expect(after.prepare('SELECT * FROM audit_sweeps').all()).toEqual([{ id: 'x', note: 'mine' }]);
      expect(tableNames(after)).toEqual(['audit_sweeps']);
    } finally {
      after.close();
    }
  });
});
