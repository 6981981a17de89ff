/**
 * Wire audits kept (migration 21, core/openenv/wireAuditStore.ts): the app's "Audit over the wire"
 * and the CLI's `openenv-audit --data-dir` against a real `serve-env`, listed per URL after the
 * database is opened again, a token in the URL never stored; migration 21 on a database at 20.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RemoteEnvView } from '../../../core/api/calls/openenv';
import type { StoredWireAuditView } from '../../../core/api/calls/openenvClient';
import { migrate, openDatabase, schemaVersion } from '../../../core/memory/db';
import { migrations } from '../../../core/memory/migrations';
import { createDispatcher } from '../../../core/server/dispatcher';
import { createHandlers } from '../../../core/handlers';
import { Services } from '../../../core/services/services';
import { WireAuditStore } from '../../../core/openenv/wireAuditStore';
import { tempDir } from '../../helpers/tmp';
import { ROOT, runCli, serveEnv, type Served } from './serveEnvHelpers';

const GAME = join(ROOT, 'resources', 'seed-pack', 'games', 'game_00000_001_pattern_recognition.py');
const tmp = tempDir('spade-wire-audits-');
const appData = join(tmp.dir, 'app');
let served: Served;

beforeAll(async () => {
  const data = join(tmp.dir, 'served');
  const imp = await runCli(['import', GAME, '--data-dir', data, '--quiet']);
  expect(imp.code, imp.err).toBe(0);
  served = await serveEnv(['1', '--data-dir', data, '--seeds', '4', '--runtime', 'cpython', '--max-turns', '4']);
});
afterAll(async () => {
  await served?.stop();
  tmp.cleanup();
});

async function withApp<T>(fn: (call: <R>(name: string, input: unknown) => Promise<R>) => Promise<T>): Promise<T> {
  const s = new Services({ dataDir: appData, shell: 'in-process' });
  const dispatch = createDispatcher(createHandlers(s));
  try {
    return await fn(<R,>(name: string, input: unknown) => dispatch(name, input, { transport: 'in-process' }) as Promise<R>);
  } finally {
    await s.close();
  }
}

describe('wire audits are kept', () => {
  it("keeps the CLI's and the app's audits of a server, listed newest first after the database is opened again", async () => {
    // The CLI with a data dir: its output as before, the audit kept there.
    const cli = await runCli(['openenv-audit', '--url', served.url, '--data-dir', appData]);
    expect(cli.code, cli.err).toBe(0);
    expect(cli.out.split('\n')[0]).toBe(`Wire audit of ${new URL(served.url).href} (spade-workbench): pass. These are checks over OpenEnv's protocol, not SPADE's audit.`);

    await withApp(async (call) => {
      const v = await call<RemoteEnvView>('openenv.remote.open', { url: served.url, seed: 0 });
      const audited = await call<RemoteEnvView>('openenv.remote.audit', { id: v.id });
      expect(audited.audit?.verdict).toBe('pass');
      await call('openenv.remote.close', { id: v.id });
    });

    // A second app on the same file: both audits, the app's first (newest).
    await withApp(async (call) => {
      const r = await call<{ url: string; audits: StoredWireAuditView[] }>('openenv.remote.audits', { url: served.url });
      expect(r.audits.map((a) => [a.source, a.verdict, a.serverName])).toEqual([
        ['app', 'pass', 'spade-workbench'],
        ['cli', 'pass', 'spade-workbench'],
      ]);
      for (const a of r.audits) {
        expect(a.url).toBe(new URL(served.url).href);
        expect(a.checks.map((c) => [c.id, c.status])).toEqual([
          ['wire.determinism', 'pass'],
          ['wire.seed_use', 'pass'],
          ['wire.malformed_action', 'pass'],
          ['wire.reward_range', 'pass'],
        ]);
        expect(a.elapsedMs).toBeGreaterThan(0);
        expect(Number.isNaN(Date.parse(a.createdAt))).toBe(false);
      }
      // The same server with a trailing slash, or a token, is the same list; another URL has none.
      expect((await call<{ audits: unknown[] }>('openenv.remote.audits', { url: `${served.url}/?token=abc` })).audits).toHaveLength(2);
      expect((await call<{ audits: unknown[] }>('openenv.remote.audits', { url: 'http://127.0.0.1:1' })).audits).toEqual([]);
      await expect(call('openenv.remote.audits', { url: 'file:///etc/passwd' })).rejects.toThrow(/http:\/\/ or https:\/\//);
    });
  });

  it('stores a URL without its token (a secret), and keeps a huge evidence cut rather than whole', () => {
    const db = openDatabase(join(tmp.dir, 'tokens.sqlite'));
    try {
      const store = new WireAuditStore(db);
      const big = 'x'.repeat(400 * 1024);
      store.add({ url: 'http://127.0.0.1:9/?token=s3cret-value&x=1', server: { name: 'n', version: '1', hintMode: null, textField: 'message' }, verdict: 'warn', checks: [{ id: 'wire.seed_use', status: 'warn', message: 'same start', evidence: { big } }], elapsedMs: 12 }, 'cli');
      const raw = JSON.stringify(db.prepare('SELECT * FROM wire_audits').all());
      expect(raw).not.toContain('s3cret-value');
      expect(raw.length).toBeLessThan(300 * 1024);
      const [a] = store.list('http://127.0.0.1:9/?x=1&token=other');
      expect(a).toMatchObject({ url: 'http://127.0.0.1:9/?x=1', verdict: 'warn', source: 'cli', checks: [{ id: 'wire.seed_use', status: 'warn', evidence: { truncated: true } }] });
    } finally {
      db.close();
    }
  });

  it('the CLI without a data dir keeps nothing and makes no database', async () => {
    const home = join(tmp.dir, 'no-data');
    const was = process.env.SPADE_DATA_DIR;
    process.env.SPADE_DATA_DIR = home;
    try {
      const r = await runCli(['openenv-audit', '--url', served.url, '--json']);
      expect(r.code, r.err).toBe(0);
      expect((JSON.parse(r.out) as { verdict: string }).verdict).toBe('pass');
    } finally {
      if (was === undefined) delete process.env.SPADE_DATA_DIR;
      else process.env.SPADE_DATA_DIR = was;
    }
    expect(existsSync(join(home, 'workbench.sqlite'))).toBe(false);
  });

  it('migration 21 runs on a database at 20, keeping its rows', () => {
    const path = join(tmp.dir, 'at20.sqlite');
    const old = new Database(path);
    migrate(old, migrations.filter((m) => m.version <= 20));
    expect(schemaVersion(old)).toBe(20);
    old.prepare("INSERT INTO settings (key, value) VALUES ('theme', '\"dark\"')").run();
    expect(old.prepare("SELECT name FROM sqlite_master WHERE name = 'wire_audits'").get()).toBeUndefined();
    old.close();

    const db = openDatabase(path);
    try {
      expect(schemaVersion(db)).toBe(migrations.at(-1)!.version);
      expect((db.prepare("SELECT value FROM settings WHERE key = 'theme'").get() as { value: string }).value).toBe('"dark"');
      const store = new WireAuditStore(db);
      store.add({ url: 'http://127.0.0.1:9', server: { name: null, version: null, hintMode: null, textField: null }, verdict: 'fail', checks: [], elapsedMs: 1 }, 'app');
      expect(store.list('http://127.0.0.1:9/').map((a) => a.verdict)).toEqual(['fail']);
      // The table's own checks: a verdict it does not know is refused.
      expect(() => db.prepare("INSERT INTO wire_audits (url, verdict, checks, elapsed_ms, source, created_at) VALUES ('u', 'maybe', '[]', 1, 'app', 'now')").run()).toThrow(/CHECK/);
    } finally {
      db.close();
    }
  });
});
