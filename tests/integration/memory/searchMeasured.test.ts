import { afterEach, expect, it, vi } from 'vitest';
import { join } from 'node:path';
import { createHandlers } from '../../../core/handlers';
import { createDispatcher } from '../../../core/server/dispatcher';
import { createInProcessBackend } from '../../../core/server/inProcess';
import { Services } from '../../../core/services/services';
import { tempDir } from '../../helpers/tmp';
import { gameSource } from './fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

// Search leaves the per-row measured subquery out while nothing is measured (load.ws_cpu_us_per_call,
// bench/notes/bench-issue35.md); the first measurement must show in the very next search, not a later one.
it('asks for measured numbers only once a model run measured something, and shows the first one at once', async () => {
  const tmp = tempDir('spade-search-measured-');
  const services = new Services({ dataDir: join(tmp.dir, 'data'), shell: 'in-process' });
  const api = createInProcessBackend(createDispatcher(createHandlers(services)), services.events);
  cleanups.push(async () => {
    api.close();
    await services.close();
    tmp.cleanup();
  });
  const { envId } = await api.call('editor.create', { source: gameSource(1), origin: 'paste' });
  const prepared = vi.spyOn(services.db, 'prepare');
  const first = await api.call('memory.search', { query: '', limit: 50 });
  const row = first.rows.find((r) => r.id === envId)!;
  expect(row.measured).toBeNull();
  expect(prepared.mock.calls.map((c) => String(c[0])).filter((sql) => sql.includes('FROM model_run_envs m'))).toEqual([]);

  const now = new Date().toISOString();
  services.db
    .prepare(
      "INSERT INTO model_runs (id, model, endpoint, config, hint_source, seeds, seed_start, arms, max_turns, runtime, hashes, status, started_at, updated_at) VALUES ('r1', 'm', 'e', '{}', 'stored', 2, 0, 'both', 5, 'pyodide', '[]', 'done', ?, ?)",
    )
    .run(now, now);
  services.db
    .prepare("INSERT INTO model_run_envs (run_id, env_hash, model, regret, win_rate, r_hint, r_no_hint, seeds, updated_at) VALUES ('r1', ?, 'm', 0.25, 0.5, 1, 0.75, '[0,1]', ?)")
    .run(row.hash, now);
  const next = await api.call('memory.search', { query: '', limit: 50 });
  expect(next.rows.find((r) => r.id === envId)!.measured).toMatchObject({ model: 'm', runId: 'r1', regret: 0.25, winRate: 0.5, seeds: 2, frontier: true });
  const byName = await api.call('memory.search', { query: row.name, limit: 50 });
  expect(byName.rows.find((r) => r.id === envId)!.measured).toMatchObject({ winRate: 0.5 });
});
