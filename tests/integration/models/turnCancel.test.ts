// models.turn with a requestId: episodes.cancel drops a turn whose model does not answer (the HTTP
// request aborted, nothing recorded), and the next turn plays. Real CPython, a real SQLite file, the
// stand-in OpenAI-compatible server (tests/helpers/standInOpenAi.ts), through the dispatcher.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Backend } from '../../../core/api';
import { createHandlers } from '../../../core/handlers';
import { createDispatcher } from '../../../core/server/dispatcher';
import { createInProcessBackend } from '../../../core/server/inProcess';
import { Services } from '../../../core/services/services';
import { ingest } from '../../../core/memory/repository';
import { tempDir } from '../../helpers/tmp';
import { startStandIn, type StandIn } from '../../helpers/standInOpenAi';

const GAME = 'class EchoEnv:\n    def reset(self, seed=None):\n        return "say something", {}\n    def step(self, action):\n        return "heard", 0.0, False, False, {}\n';
const tmp = tempDir('spade-turn-cancel-');
let services: Services;
let api: Backend;
let server: StandIn;
let slow = true;

beforeAll(async () => {
  server = await startStandIn(() => ({ content: 'I say \\boxed{hi}', delayMs: slow ? 60_000 : 5 }));
  services = new Services({ dataDir: tmp.dir, shell: 'in-process' });
  api = createInProcessBackend(createDispatcher(createHandlers(services)), services.events);
  await api.call('settings.update', { defaultRuntime: 'cpython' });
  ingest(services.db, { source: GAME, path: 'echo.py' });
});
afterAll(async () => {
  api.close();
  await services.close();
  await server.close();
  tmp.cleanup();
});

it('cancels a model turn that waits on its model, records nothing, and the next turn plays', async () => {
  const env = await api.call('memory.get', { id: 1 });
  const ep = await api.call('episodes.open', { hash: env.hash, seed: 1, hint: false, label: 'turn cancel' });
  const endpoint = { baseUrl: server.url, model: 'stand-in', retries: 0 };
  const turn = api.call('models.turn', { id: ep.episode.id, endpoint, requestId: 'turn-1' }).then(
    () => 'answered',
    (e: { code?: string }) => e.code,
  );
  await expect.poll(() => server.requests.length, { timeout: 30_000 }).toBe(1);
  expect(await api.call('episodes.cancel', { requestId: 'turn-1' })).toEqual({ cancelled: true });
  expect(await turn).toBe('cancelled');
  expect((await api.call('episodes.get', { id: ep.episode.id })).steps).toHaveLength(1);
  // Nothing is left to cancel, and the episode plays on (its session reopened from the recording).
  expect(await api.call('episodes.cancel', { requestId: 'turn-1' })).toEqual({ cancelled: false });
  slow = false;
  const next = await api.call('models.turn', { id: ep.episode.id, endpoint });
  expect(next.steps.at(-1)!.action).toBe('\\boxed{hi}');
  expect((await api.call('episodes.get', { id: ep.episode.id })).steps).toHaveLength(2);
});
