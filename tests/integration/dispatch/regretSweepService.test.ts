import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend, EventPayload } from '../../../core/api';
import { createHandlers } from '../../../core/handlers';
import { createDispatcher } from '../../../core/server/dispatcher';
import { createInProcessBackend } from '../../../core/server/inProcess';
import { Services } from '../../../core/services/services';
import { tempDir } from '../../helpers/tmp';
import { cli, importPool, poolFiles } from './pool';

// A regret sweep as the app's API starts it (runs.sweepStart), on this machine in real CPython:
// a workbench that stops mid-way leaves it "interrupted"; the next one lists it so, resumes it to
// the end with every episode played once, and its report is what `regret --resume` prints.

type Sweep = EventPayload<'runs.sweepProgress'>;

let tmp: ReturnType<typeof tempDir>;

function open(): { services: Services; api: Backend; heard: Sweep[] } {
  const services = new Services({ dataDir: tmp.dir, shell: 'in-process' });
  const api = createInProcessBackend(createDispatcher(createHandlers(services)), services.events);
  const heard: Sweep[] = [];
  api.on('runs.sweepProgress', (p) => heard.push(p));
  return { services, api, heard };
}

function until(heard: Sweep[], api: Backend, ok: (s: Sweep) => boolean): Promise<Sweep> {
  return new Promise((resolve) => {
    const check = () => {
      const s = heard.find(ok);
      if (s) {
        off();
        resolve(s);
      }
    };
    const off = api.on('runs.sweepProgress', check);
    check();
  });
}

beforeAll(async () => {
  tmp = tempDir('spade-regret-service-');
  // One game that takes half a second to reset, so that the sweep is still mid-way when its first
  // progress event says an episode is done (on an idle machine the other games' 12 episodes end
  // within the 250 ms between events, and all 18 could be done before the workbench stops).
  const [a, b, c] = poolFiles(3);
  const slow = join(tmp.dir, 'game_slow_reset.py');
  const src = readFileSync(c!, 'utf8');
  const cls = /^class (\w+)/m.exec(src)![1]!;
  writeFileSync(slow, `${src}\n\nimport time as _t\n_reset = ${cls}.reset\ndef _slow_reset(self, *a, **k):\n    _t.sleep(0.5)\n    return _reset(self, *a, **k)\n${cls}.reset = _slow_reset\n`);
  writeFileSync(slow.replace(/\.py$/, '_hint.txt'), readFileSync(c!.replace(/\.py$/, '_hint.txt'), 'utf8'));
  await importPool(tmp.dir, [a!, b!, slow]);
}, 60_000);
afterAll(() => tmp.cleanup());

describe('regret sweeps through the API', () => {
  it('an interrupted sweep is listed so, resumes with nothing played twice, and reports what regret --resume prints', async () => {
    const a = open();
    const started = await a.api.call('runs.sweepStart', { query: '', estimator: 'paired', seeds: 3, policy: { kind: 'random', seed: 5 }, target: { kind: 'local' } });
    expect(started).toMatchObject({ state: 'running', total: 18, envs: 3, seeds: 3, policy: 'random guesses (seed 5)' });
    await until(a.heard, a.api, (s) => s.id === started.id && s.done >= 1);
    // The workbench stops mid-way (closing stops the sweep as Ctrl-C does); a killed one leaves the
    // sweep and its run marked running, which is put back here.
    a.api.close();
    await a.services.close();
    const b = open();
    try {
      b.services.db.prepare("UPDATE sweeps SET state = 'running' WHERE id = ?").run(started.id);
      b.services.db.prepare("UPDATE model_runs SET status = 'running' WHERE id = ?").run(started.runId);
      const [listed] = await b.api.call('runs.sweeps', { limit: 5 });
      expect(listed).toMatchObject({ id: started.id, state: 'interrupted' });
      expect(listed!.done).toBeGreaterThan(0);
      expect(listed!.done).toBeLessThan(18);
      // Nothing of it runs here: its run is not live, and the Runs page may resume it as a sweep.
      expect((await b.api.call('runs.get', { id: started.runId })).live).toBe(false);

      const resumed = await b.api.call('runs.sweepResume', { sweepId: started.id });
      expect(resumed).toMatchObject({ id: started.id, state: 'running', runId: started.runId });
      const end = await until(b.heard, b.api, (s) => s.id === started.id && s.state !== 'running');
      expect(end).toMatchObject({ state: 'done', done: 18, total: 18, failed: 0 });
      const view = await b.api.call('runs.get', { id: started.runId });
      expect(view.run.status).toBe('done');
      expect(view.episodes).toMatchObject({ total: 18, ok: 18 });
      const played = b.services.db.prepare("SELECT COUNT(*) AS n, COUNT(DISTINCT json_extract(meta, '$.job')) AS jobs FROM episodes WHERE json_extract(meta, '$.run') = ?").get(started.runId) as { n: number; jobs: number };
      expect(played).toEqual({ n: 18, jobs: 18 });
      await expect(b.api.call('runs.sweepResume', { sweepId: started.id })).rejects.toMatchObject({ code: 'conflict' });

      const report = await b.api.call('runs.sweepReport', { sweepId: started.id });
      const printed = await cli(['regret', '--resume', started.id, '--json', '--quiet', '--data-dir', tmp.dir]);
      expect(printed.code, printed.err).toBe(0);
      const { episodes: _e, ...fromCli } = JSON.parse(printed.out) as Record<string, unknown>;
      expect(report).toEqual(fromCli);
      expect(report.envs).toHaveLength(3);
      expect(report.summary.envs).toBe(3);
    } finally {
      b.api.close();
      await b.services.close();
    }
  }, 120_000);

  it('refuses what it cannot do in words: an empty pool, an unknown sweep', async () => {
    const c = open();
    try {
      await expect(c.api.call('runs.sweepStart', { query: 'no-such-game-anywhere', estimator: 'paired', seeds: 1, policy: { kind: 'solution' } })).rejects.toMatchObject({ code: 'invalid_input', message: 'No environment in the library matches "no-such-game-anywhere"' });
      await expect(c.api.call('runs.sweepReport', { sweepId: 'nosuch' })).rejects.toMatchObject({ code: 'not_found' });
      expect(await c.api.call('runs.sweeps', {})).toHaveLength(1);
    } finally {
      c.api.close();
      await c.services.close();
    }
  });
});
