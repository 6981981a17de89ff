/**
 * Model runs as records, end to end through the in-process API: real SQLite files, real Pyodide,
 * and the stand-in OpenAI-compatible server (tests/helpers) as the model. A run survives a restart,
 * a cancel and a resume lose and repeat no episode, and a server killed mid-run yields failed
 * episodes that change no mean.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Backend } from '../../../core/api';
import { createHandlers } from '../../../core/handlers';
import { createDispatcher } from '../../../core/server/dispatcher';
import { createInProcessBackend } from '../../../core/server/inProcess';
import { Services } from '../../../core/services/services';
import { tempDir } from '../../helpers/tmp';
import { startStandIn, type StandIn } from '../../helpers/standInOpenAi';
import { GUESS_GAME } from './guessGame';

const hinted = (b: Record<string, unknown>) => String((b.messages as { content: string }[])[0]!.content).includes('HINT: ');

let tmp: ReturnType<typeof tempDir>;
let services: Services;
let api: Backend;
let server: StandIn | null = null;
const dataDir = () => join(tmp.dir, 'data');
function open(): void {
  services = new Services({ dataDir: dataDir(), shell: 'in-process' });
  api = createInProcessBackend(createDispatcher(createHandlers(services)), services.events);
}
async function reopen(): Promise<void> {
  api.close();
  await services.close();
  open();
}
beforeEach(() => {
  tmp = tempDir('spade-runs-');
  open();
});
afterEach(async () => {
  await server?.close().catch(() => {});
  server = null;
  api.close();
  await services.close();
  tmp.cleanup();
});

async function addGame(name = 'guess'): Promise<string> {
  const hash = services.episodes.ctx.d.catalog.add(GUESS_GAME.replace('class GuessEnv', `# ${name}\nclass GuessEnv`), null, `${name}.py`);
  const env = (await api.call('memory.get', { hash })) as { id: number };
  await api.call('memory.update', { id: env.id, hint: 'the number is lucky' });
  return hash;
}

const endpoint = (url: string) => ({ baseUrl: url, model: 'stand-in-a', retries: 0, turnTimeoutSec: 10, concurrency: 1, maxTokens: 64 });

describe('model runs are records', () => {
  it('an endpoint killed mid-run leaves failed episodes with their errors that change no mean; regret is "not measured" until enough seeds played', async () => {
    const hash = await addGame();
    let served = 0;
    server = await startStandIn((b) => {
      // Five answers, then the server goes away: every later request finds nothing listening.
      if (++served > 5) {
        void server!.close();
        return { drop: true };
      }
      return { content: hinted(b) ? 'so \\boxed{7}' : 'I guess \\boxed{3}' };
    });
    const r = await api.call('models.play', { hashes: [hash], endpoint: endpoint(server.url), seeds: 4, seedStart: 0, runtime: 'pyodide', runId: 'killed', estimator: 'paired' });
    const failed = r.episodes.filter((e) => e.failed);
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.length).toBeLessThan(8);
    for (const e of failed) {
      expect(e.return).toBeNull();
      expect(e.error).toBeTruthy();
    }
    // Hinted episodes that played all won, unhinted ones all lost: no failed one is counted as a 0.
    for (const e of r.episodes.filter((x) => !x.failed)) expect(e.return).toBe(e.hint ? 1 : 0);
    expect(r.failedText).toBe(`${failed.length} of 8 episodes failed`);
    const env = r.envs[0]!;
    expect(env).toMatchObject({ regret: null, rHint: null, rNoHint: null, winRate: null, failed: failed.length });
    expect(env.notMeasured).toMatch(/episodes failed/);

    // The run is a record: after a restart it reads the same, and with a lower threshold the
    // seeds that played in both arms measure regret 1 exactly (a failed hinted play counted as 0 would lower it).
    await reopen();
    const v = await api.call('runs.get', { id: 'killed' });
    expect(v.run).toMatchObject({ status: 'done', model: 'stand-in-a', seeds: 4 });
    expect(v.episodes).toMatchObject({ total: 8, failed: failed.length, expected: 8 });
    expect(v.envs[0]!.episodes.filter((e) => e.status === 'failed').every((e) => e.ret === null && !!e.error)).toBe(true);
    await api.call('settings.update', { runMinSuccess: 0.25 });
    const lowered = await api.call('runs.get', { id: 'killed' });
    const m = lowered.envs[0]!;
    expect(m.seeds.length).toBeGreaterThanOrEqual(1);
    expect(m).toMatchObject({ rHint: 1, rNoHint: 0, regret: 1, winRate: 0, notMeasured: null });
  }, 400_000);

  it('a cancelled run resumes with no episode lost or counted twice, and a run left running by a stopped workbench shows as interrupted and resumes', async () => {
    const hash = await addGame();
    server = await startStandIn((b) => ({ content: hinted(b) ? 'so \\boxed{7}' : 'I guess \\boxed{3}', delayMs: 30 }));
    const runId = 'cancel-me';
    const off = api.on('episodes.regretProgress', (p) => {
      if (p.runId === runId && p.done >= 3) void api.call('episodes.regretCancel', { runId });
    });
    const first = await api.call('models.play', { hashes: [hash], endpoint: endpoint(server.url), seeds: 5, seedStart: 10, runtime: 'pyodide', runId, estimator: 'paired' });
    off();
    expect(first.cancelled).toBe(true);
    expect(first.status).toBe('cancelled');
    const kept = first.episodes.map((e) => e.episodeId).sort();
    expect(kept.length).toBeGreaterThanOrEqual(3);
    expect(kept.length).toBeLessThan(10);
    // Not every seed played: not measured, and the run says how many episodes it has.
    expect(first.envs[0]!.regret).toBeNull();

    const resumed = await api.call('runs.resume', { id: runId });
    expect(resumed.status).toBe('done');
    const keys = resumed.episodes.map((e) => `${e.seed}:${e.hint}`);
    expect(new Set(keys).size).toBe(10);
    expect(keys).toHaveLength(10);
    // The episodes played before the cancel are the same records, not replayed.
    for (const id of kept) expect(resumed.episodes.map((e) => e.episodeId)).toContain(id);
    const all = await api.call('episodes.list', { envHash: hash, limit: 100 });
    expect(all.rows.filter((e) => e.meta.run === runId)).toHaveLength(10);
    expect(resumed.envs[0]).toMatchObject({ rHint: 1, rNoHint: 0, regret: 1, winRate: 0, difficulty: 0, seeds: [10, 11, 12, 13, 14] });

    // A run the workbench was playing when it stopped: the record says running until the next start.
    services.runs.begin({ id: 'orphan', model: 'stand-in-a', endpoint: server.url, config: { endpoint: { ...endpoint(server.url), apiKeyEnv: 'A_CLI_RUN_KEY_VAR' }, sampling: { temperature: 1, topP: 0.95, topK: 20, maxTokens: 64, thinking: null }, hintText: null }, hintSource: 'library', seeds: 1, seedStart: 0, arms: ['hint', 'nohint'], maxTurns: 30, runtime: 'pyodide', selection: null, hashes: [hash], estimator: 'paired' });
    expect((await api.call('runs.get', { id: 'orphan' })).run.status).toBe('running');
    await reopen();
    const orphan = await api.call('runs.get', { id: 'orphan' });
    expect(orphan.run.status).toBe('cancelled');
    expect(orphan.run.error).toMatch(/interrupted/);
    const done = await api.call('runs.resume', { id: 'orphan' });
    expect(done.status).toBe('done');
    expect(done.envs[0]).toMatchObject({ regret: 1 });
    const list = await api.call('runs.list', {});
    expect(list.rows.map((r) => [r.id, r.status])).toEqual(expect.arrayContaining([[runId, 'done'], ['orphan', 'done']]));
  }, 600_000);
});
