import { afterAll, beforeAll, expect, test } from 'vitest';
import { isApiError, type Backend } from '../../../core/api';
import { sha256 } from '../../../core/memory/parse';
import { createDispatcher } from '../../../core/server/dispatcher';
import { createHandlers } from '../../../core/handlers';
import { createInProcessBackend } from '../../../core/server/inProcess';
import { Services } from '../../../core/services/services';
import { tempDir } from '../../helpers/tmp';
import { ensureChildBuilt, GUESS_GAME } from './helpers';

let services: Services;
let api: Backend;
let tmp: ReturnType<typeof tempDir>;

beforeAll(() => {
  ensureChildBuilt();
  tmp = tempDir('spade-runtime-api-');
  services = new Services({ dataDir: tmp.dir, shell: 'in-process' });
  api = createInProcessBackend(createDispatcher(createHandlers(services)), services.events);
});
afterAll(async () => {
  api.close();
  await services.close();
  tmp.cleanup();
});

async function rejects(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (isApiError(e)) return e.code;
    throw e;
  }
  throw new Error('expected an ApiError');
}

test('a session through the contract: open by version hash, reset, step, play, state, snapshot, close', async () => {
  await api.call('editor.create', { source: GUESS_GAME, origin: 'paste' });
  const versionHash = sha256(GUESS_GAME);
  const opened = await api.call('runtime.open', { versionHash, runtime: 'pyodide', maxTurns: 30 });
  expect(opened).toMatchObject({ ok: true, runtime: 'pyodide', isolation: 'sandboxed', className: 'GuessEnv', maxTurns: 30, hasSolution: true });
  const sessionId = opened.sessionId!;
  const reset = await api.call('runtime.reset', { sessionId, seed: 4 });
  expect(reset.ok && reset.result?.observation).toBe('Guess a number from 1 to 10');
  const sol = await api.call('runtime.solution', { sessionId });
  const play = await api.call('runtime.play', { sessionId, seed: 4, actions: ['\\boxed{0}', `\\boxed{${String(sol.result?.value)}}`] });
  expect(play.result?.steps.map((s) => s.reward)).toEqual([0, 1]);
  const step = await api.call('runtime.step', { sessionId, action: '\\boxed{crash}' });
  expect(step.ok).toBe(false);
  expect(step.error).toMatchObject({ kind: 'env_error', type: 'KeyError' });
  const snap = await api.call('runtime.snapshot', { sessionId });
  expect(snap.ok).toBe(true);
  expect((await api.call('runtime.restore', { sessionId, token: snap.result!.token })).ok).toBe(true);
  const state = await api.call('runtime.state', { sessionId });
  expect(state.result?.className).toBe('GuessEnv');
  const status = await api.call('runtime.status', {});
  expect(status.pool.started).toBe(true);
  expect(status.sessions).toBeGreaterThan(0);
  const health = await api.call('app.health', {});
  expect(health.components.find((c) => c.name === 'runtime')?.state).toMatch(/ready|busy/);
  expect(await api.call('runtime.close', { sessionId })).toEqual({ closed: true });
  expect(await rejects(api.call('runtime.step', { sessionId, action: 'x' }))).toBe('not_found');
});

test('bad requests are typed errors; game failures are data', async () => {
  expect(await rejects(api.call('runtime.open', { source: 'x', versionHash: 'a'.repeat(64) } as never))).toBe('invalid_input');
  expect(await rejects(api.call('runtime.open', { versionHash: 'b'.repeat(64) }))).toBe('not_found');
  const bad = await api.call('runtime.open', { source: 'class XEnv:\n    def reset(self:\n', runtime: 'pyodide' });
  expect(bad).toMatchObject({ ok: false, error: { kind: 'load_error', stage: 'syntax', line: 2 } });
  const syntax = await api.call('runtime.checkSyntax', { source: 'if x\n    pass\n' });
  expect(syntax.ok).toBe(false);
  expect(syntax.errors[0]).toMatchObject({ line: 1 });
});
