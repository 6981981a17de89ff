import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectSources } from '../../../core/audit/sources';
import { AuditService } from '../../../core/audit/service';
import { getBatch } from '../../../core/audit/auditStore';
import { PyodidePool } from '../../../core/runtime/pyodidePool';
import { createHandlers } from '../../../core/handlers';
import { ingest } from '../../../core/memory/repository';
import { Services } from '../../../core/services/services';
import { tempDir } from '../../helpers/tmp';

// A real Services over a temporary SQLite file, the seed pack ingested, audits on real CPython.
const root = join(__dirname, '..', '..', '..');
let s: Services;
let h: ReturnType<typeof createHandlers>;
const tmp = tempDir();
const progress: { state: string; done: number; total: number }[] = [];

beforeAll(() => {
  s = new Services({ dataDir: tmp.dir, shell: 'in-process' });
  h = createHandlers(s);
  for (const src of collectSources(join(root, 'resources', 'seed-pack'))) ingest(s.db, { source: src.source, path: src.file, fileStem: src.stem, hint: src.hint });
  s.events.subscribe((name, p) => {
    if (name === 'audit.progress') progress.push(p as { state: string; done: number; total: number });
  });
});
afterAll(async () => {
  await s.close();
  tmp.cleanup();
});

const call = <N extends keyof typeof h>(n: N, input: Parameters<(typeof h)[N]>[0]) => (h[n] as (i: unknown) => unknown)(input) as ReturnType<(typeof h)[N]>;

describe('audit service', () => {
  it('audits one version and stores the result per version', async () => {
    const envs = s.db.prepare('SELECT id, head_hash FROM environments WHERE file_stem = ?').get('game_00000_013_mathematical_reasoning') as { id: number; head_hash: string };
    const r = await call('audit.run', { hash: envs.head_hash });
    expect(r.verdict).toBe('fail');
    expect(r.spadeAccepts).toBe(true);
    expect(r.checks.find((c) => c.id === 'reset-leak')!.status).toBe('fail');
    const again = await call('audit.results', { hash: envs.head_hash });
    expect(again!.checks).toEqual(r.checks);
  });

  it('runs a batch over the whole memory, can cancel it, and resumes where it stopped', async () => {
    const total = (s.db.prepare('SELECT COUNT(*) AS n FROM environments').get() as { n: number }).n;
    const { batchId, total: t } = await call('audit.batch', { all: true });
    expect(t).toBe(total);
    expect(await call('audit.cancel', { batchId })).toEqual({ cancelled: true });
    const svc = s.audit;
    await svc.settle(batchId);
    const cancelled = getBatch(s.db, batchId)!;
    expect(cancelled.state).toBe('cancelled');
    expect(cancelled.done).toBeLessThan(total);

    const resumed = await call('audit.resume', { batchId });
    expect(resumed.remaining).toBe(total - cancelled.done);
    await svc.settle(batchId);
    const done = getBatch(s.db, batchId)!;
    expect(done.state).toBe('done');
    expect(done.done).toBe(total);
    expect(progress.some((p) => p.state === 'cancelled')).toBe(true);
    expect(progress.at(-1)).toMatchObject({ state: 'done', done: total, total });

    const sum = await call('audit.summary', {});
    expect(sum.audited).toBe(total);
    expect(sum.spadeAccepted).toBe(total);
    const leak = sum.byCheck.find((c) => c.id === 'reset-leak')!;
    expect(leak.fail).toBe(1);
    expect(leak.failShare).toBeCloseTo(1 / total);
    const ids = await call('audit.environments', { checkId: 'solution', status: 'fail' });
    const stems = ids.ids.map((id) => (s.db.prepare('SELECT file_stem FROM environments WHERE id = ?').get(id) as { file_stem: string }).file_stem);
    expect(stems).toEqual(['game_00000_015_logical_deduction']);

    // The library filters on the same stored results (the dashboard's "show in library").
    const lib = await call('memory.search', { query: '', offset: 0, limit: 100, filters: { audit: { checkId: 'solution', status: 'fail' } } });
    expect(lib.rows.map((r) => r.id)).toEqual(ids.ids);
    const leaking = await call('memory.search', { query: '', offset: 0, limit: 100, filters: { audit: { checkId: 'reset-leak', status: 'fail' } } });
    expect(leaking.total).toBe(1);
    for (const verdict of ['pass', 'warn', 'fail'] as const) {
      expect((await call('memory.search', { query: '', offset: 0, limit: 100, filters: { audit: { status: verdict } } })).total).toBe(sum.verdicts[verdict]);
    }
    const solutionPass = sum.byCheck.find((c) => c.id === 'solution')!.pass;
    expect(solutionPass).toBeGreaterThan(0);
    expect((await call('memory.matchingIds', { query: '', filters: { audit: { checkId: 'solution', status: 'pass' } } })).ids).toHaveLength(solutionPass);
  });

  it('audits in the Pyodide sandbox by default, games that import numpy in CPython, and where the setting says', async () => {
    const head = (stem: string) => (s.db.prepare('SELECT head_hash FROM environments WHERE file_stem = ?').get(stem) as { head_hash: string }).head_hash;
    expect(s.settings.get().auditRuntime).toBe('pyodide');
    const plain = await call('audit.run', { hash: head('game_00000_013_mathematical_reasoning') });
    expect(plain.runtime).toBe('pyodide');
    const numpy = await call('audit.run', { hash: head('game_00000_010_mathematical_reasoning') });
    expect(numpy.runtime).toBe('cpython');
    expect(numpy.checks.find((c) => c.id === 'spade.exec')!.status).toBe('pass');
    s.settings.update({ auditRuntime: 'cpython' });
    try {
      const native = await call('audit.run', { hash: head('game_00000_013_mathematical_reasoning') });
      expect(native.runtime).toBe('cpython');
      expect(native.checks.map((c) => [c.id, c.status])).toEqual(plain.checks.map((c) => [c.id, c.status]));
      expect((await call('audit.results', { hash: head('game_00000_013_mathematical_reasoning') }))!.runtime).toBe('cpython');
    } finally {
      s.settings.update({ auditRuntime: 'pyodide' });
    }
  });

  it("a sandboxed audit whose interpreter is killed leaves the sessions' interpreters alone", async () => {
    const live = await s.runtime.open({ source: readFileSync(join(__dirname, 'fixtures', 'spade', '00_accepted.py'), 'utf8'), runtime: 'pyodide' });
    expect(live.ok).toBe(true);
    const sid = live.ok ? live.sessionId : '';
    expect((await s.runtime.call(sid, { cmd: 'reset', seed: 1 })).ok).toBe(true);
    const bombSource = readFileSync(join(__dirname, 'fixtures', 'hostile', 'h3_alloc.py'), 'utf8');
    ingest(s.db, { source: bombSource, path: 'hostile/h3_alloc.py', fileStem: 'h3_alloc' });
    const r = await call('audit.run', { hash: createHash('sha256').update(bombSource).digest('hex') });
    expect(r.runtime).toBe('pyodide');
    expect(r.checks.find((c) => c.id === 'spade.reset')!.message).toContain('Memory limit');
    expect(s.runtime.pool.status().restarted).toBe(0);
    expect((await s.runtime.call(sid, { cmd: 'step', action: 'x' })).ok).toBe(true);
    await s.runtime.close(sid);
  });

  it('shuts the sandbox interpreters down when audits stop, and starts them again for the next audit', async () => {
    const svc = new AuditService({ db: s.db, events: s.events, maxTurns: () => 25, runtime: () => 'pyodide', makePyodide: () => new PyodidePool({ size: 1 }), sandboxIdleMs: 300 });
    try {
      const hash = (s.db.prepare('SELECT head_hash FROM environments WHERE file_stem = ?').get('game_00000_013_mathematical_reasoning') as { head_hash: string }).head_hash;
      expect(svc.sandboxUp()).toBe(false);
      expect((await svc.runOne(hash))!.runtime).toBe('pyodide');
      expect(svc.sandboxUp()).toBe(true);
      await new Promise((r) => setTimeout(r, 800));
      expect(svc.sandboxUp()).toBe(false);
      const again = (await svc.runOne(hash))!;
      expect(again.runtime).toBe('pyodide');
      expect(again.checks.find((c) => c.id === 'reset-leak')!.status).toBe('fail');
      expect(svc.sandboxUp()).toBe(true);
    } finally {
      await svc.close();
    }
    expect(svc.sandboxUp()).toBe(false);
  });

  it('refuses unknown check ids with invalid_input', async () => {
    await expect(Promise.resolve().then(() => call('audit.batch', { all: true, checks: ['bogus'] }))).rejects.toMatchObject({ code: 'invalid_input' });
  });
});
