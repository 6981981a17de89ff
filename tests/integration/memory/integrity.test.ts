import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, type Backend } from '../../../core/api';
import { createHandlers } from '../../../core/handlers';
import { createDispatcher } from '../../../core/server/dispatcher';
import { createInProcessBackend } from '../../../core/server/inProcess';
import { Services } from '../../../core/services/services';
import { makeDamagedLibrary } from '../../helpers/damage';
import { tempDir } from '../../helpers/tmp';
import { gameSource, write } from './fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function open(dir: string): { services: Services; api: Backend } {
  const services = new Services({ dataDir: dir, shell: 'in-process' });
  const api = createInProcessBackend(createDispatcher(createHandlers(services), () => {}), services.events);
  cleanups.push(() => services.close());
  return { services, api };
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApiError) return e.code;
    throw e;
  }
  return 'ok';
}

async function damagedLibrary(opts: { runningJob?: boolean } = {}): Promise<string> {
  const tmp = tempDir('spade-integrity-');
  cleanups.push(tmp.cleanup);
  await makeDamagedLibrary(tmp.dir, opts);
  return tmp.dir;
}

describe('database integrity', () => {
  it('reports a damaged file in app.health and pauses writes until the user chooses', async () => {
    const dir = await damagedLibrary();
    const { api } = open(dir);
    const health = await api.call('app.health', {});
    expect(health.ok).toBe(false);
    expect(health.database.integrity).toMatchObject({ checked: 'quick', ok: false });
    expect(health.database.integrity.problems.length).toBeGreaterThan(0);
    expect(health.database.writesPaused).toBe(true);

    // Reads still answer (the user can look and export); writes are refused with a clear reason.
    expect(await codeOf(api.call('memory.stats', {}))).toBe('ok');
    expect(await codeOf(api.call('settings.update', { theme: 'dark' }))).toBe('unavailable');
    expect(await codeOf(api.call('memory.tag', { ids: [1], add: ['x'], remove: [] }))).toBe('unavailable');
    const src = join(dir, 'incoming');
    write(src, 'game_00001_000_optimization.py', gameSource(1, 'LateEnv'));
    expect(await codeOf(api.call('memory.import', { paths: [src] }))).toBe('unavailable');

    const full = await api.call('app.checkDatabase', { full: true });
    expect(full.integrity).toMatchObject({ checked: 'full', ok: false });
    expect(full.writesPaused).toBe(true);

    const resumed = await api.call('app.resumeWrites', { confirm: true });
    expect(resumed.writesPaused).toBe(false);
    expect(await codeOf(api.call('settings.update', { theme: 'dark' }))).toBe('ok');
  });

  it('says ok for a healthy file and writes normally', async () => {
    const tmp = tempDir('spade-integrity-ok-');
    cleanups.push(tmp.cleanup);
    const { api } = open(tmp.dir);
    const health = await api.call('app.health', {});
    expect(health.database).toMatchObject({ ok: true, writesPaused: false, integrity: { checked: 'quick', ok: true, problems: [] } });
    expect(await codeOf(api.call('settings.update', { theme: 'light' }))).toBe('ok');
    const raw = new Database(join(tmp.dir, 'workbench.sqlite'), { readonly: true });
    expect(raw.pragma('quick_check', { simple: true })).toBe('ok');
    raw.close();
  });

  it('does not follow jobs (which writes every second) while writes are paused, and picks them up after', async () => {
    const dir = await damagedLibrary({ runningJob: true });
    const { services, api } = open(dir);
    const errors: string[] = [];
    services.events.subscribe((name, p) => {
      if (name === 'log.line' && (p as { level: string }).level === 'error') errors.push((p as { message: string }).message);
    });
    // Two poll periods: a follower would have tried (and failed) to write the job's state by now.
    await new Promise((r) => setTimeout(r, 2500));
    expect(errors.filter((m) => m.includes('j-damaged'))).toEqual([]);
    const job = () => services.jobs.manager.get('j-damaged');
    expect(job()).toMatchObject({ state: 'running', detail: '' });
    await api.call('app.resumeWrites', { confirm: true });
    // Once writes resume the job is followed again: its state or detail gets written.
    for (let i = 0; i < 100 && job().state === 'running' && job().detail === ''; i++) await new Promise((r) => setTimeout(r, 100));
    expect(job().state !== 'running' || job().detail !== '').toBe(true);
  });
});
