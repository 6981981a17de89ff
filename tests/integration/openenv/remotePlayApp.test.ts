/**
 * The app's call openenv.remote.play: a model (the stand-in OpenAI-compatible server of
 * tests/helpers/standInOpenAi.ts) plays a `serve-env` process as a model run record, through real
 * Services and the dispatcher, with progress (episodes.regretProgress) and Cancel
 * (episodes.regretCancel, the Runs page's); and against a hostile OpenEnv server (a dropped
 * connection, garbage frames mid-episode) each such episode is a failed row with its error while the
 * run ends and keeps the rest.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventPayload } from '../../../core/api';
import type { ModelRun } from '../../../core/api/calls/models';
import { createDispatcher } from '../../../core/server/dispatcher';
import { createHandlers } from '../../../core/handlers';
import { Services } from '../../../core/services/services';
import { remoteHash } from '../../../core/openenv/remoteRun';
import { pinOf } from '../../../core/openenv/remotePlay';
import { describeServer, WireSession } from '../../../core/openenv/client';
import { LocalEngine } from '../../../core/models/localEngine';
import { DEFAULT_LOCAL_MODEL } from '../../../core/models/localModel';
import { startStandIn, type StandIn } from '../../helpers/standInOpenAi';
import { tempDir } from '../../helpers/tmp';
import { ROOT, runCli, serveEnv, type Served } from './serveEnvHelpers';

const GAME = join(ROOT, 'resources', 'seed-pack', 'games', 'game_00000_001_pattern_recognition.py');
const tmp = tempDir('spade-openenv-remoteplay-');
const serverData = join(tmp.dir, 'served');
let served: Served;
let model: StandIn;
let s: Services;
let dispatch: ReturnType<typeof createDispatcher>;
const progress: EventPayload<'episodes.regretProgress'>[] = [];
/** Answers are held while this is set (the Cancel test). */
let gate: Promise<void> | null = null;
let openGate: () => void = () => {};

const call = <T,>(name: string, input: unknown) => dispatch(name, input, { transport: 'in-process' }) as Promise<T>;

/** The first observation's text of game `env` at `url` (seed 0, unhinted), read on a session of its own. */
async function svcEpisodeText(url: string, env: string): Promise<string> {
  const ws = await WireSession.open(url);
  try {
    const r = await ws.reset({ seed: 0, hint: false, env });
    return String(r.observation.text);
  } finally {
    await ws.close();
  }
}
const endpoint = (url: string) => ({ baseUrl: url, model: 'stand-in', retries: 0, maxTokens: 64 });
const firstUser = (b: Record<string, unknown>) => String((b.messages as { role: string; content: string }[]).find((m) => m.role === 'user')?.content ?? '');

beforeAll(async () => {
  const imp = await runCli(['import', GAME, '--data-dir', serverData, '--quiet']);
  expect(imp.code, imp.err).toBe(0);
  served = await serveEnv(['1', '--data-dir', serverData, '--seeds', '4', '--runtime', 'cpython', '--max-turns', '4']);
  model = await startStandIn(() => ({ content: 'The next one is \\boxed{1}', ...(gate ? { after: gate } : {}) }));
  s = new Services({ dataDir: join(tmp.dir, 'app'), shell: 'in-process' });
  dispatch = createDispatcher(createHandlers(s));
  s.events.subscribe((name, p) => {
    if (name === 'episodes.regretProgress') progress.push(p as EventPayload<'episodes.regretProgress'>);
  });
});
afterAll(async () => {
  openGate();
  await s?.close();
  await LocalEngine.closeAll();
  await model?.close();
  await served?.stop();
  tmp.cleanup();
});

describe('openenv.remote.play: a model plays a served environment as a run record', () => {
  it('plays both arms over the seeds, reports progress, and the run is in Runs with the server as its environment', async () => {
    const r = await call<ModelRun>('openenv.remote.play', { runId: 'remote-both', url: served.url, endpoint: endpoint(model.url), seeds: 2, seedStart: 1, arms: ['hint', 'nohint'], maxTurns: 2 });
    expect(r.status).toBe('done');
    expect(r.cancelled).toBe(false);
    // Both arms on both seeds (the record lists them by seed).
    expect(r.episodes.map((e) => [e.hint, e.seed, e.failed, e.error]).sort((x, y) => Number(y[0]) - Number(x[0]) || Number(x[1]) - Number(y[1]))).toEqual([
      [true, 1, false, null],
      [true, 2, false, null],
      [false, 1, false, null],
      [false, 2, false, null],
    ]);
    for (const e of r.episodes) expect(typeof e.return).toBe('number');
    // The hinted arm's first observation carries serve-env's hint; the unhinted one's does not.
    const firsts = model.requests.filter((b) => (b.messages as unknown[]).length <= 2).map(firstUser);
    expect(firsts.filter((m) => m.includes('HINT:'))).toHaveLength(2);
    expect(firsts.filter((m) => !m.includes('HINT:'))).toHaveLength(2);
    expect(progress.filter((p) => p.runId === 'remote-both').map((p) => [p.done, p.total])).toEqual([
      [1, 4],
      [2, 4],
      [3, 4],
      [4, 4],
    ]);

    const list = await call<{ rows: { id: string; selection: string | null; status: string; episodes: { total: number; expected: number } }[] }>('runs.list', {});
    const row = list.rows.find((x) => x.id === 'remote-both')!;
    expect(row).toMatchObject({ status: 'done', selection: `openenv:${new URL(served.url).href}`, episodes: { total: 4, expected: 4 } });
    const view = await call<{ run: { runtime: string; hashes: string[]; config: { endpoint: Record<string, unknown> } }; envs: { envName: string | null; rHint: number | null; rNoHint: number | null; episodes: { episodeId: number | null; hint: boolean; seed: number }[] }[] }>('runs.get', { id: 'remote-both' });
    expect(view.run.runtime).toBe('openenv');
    // The server and the game it plays (serve-env's first task), not the URL alone.
    expect(view.run.hashes).toEqual([remoteHash(new URL(served.url).href, pinOf(await describeServer(served.url)))]);
    // Named as the served game at the server (serve-env's first task).
    expect(view.envs[0]!.envName).toMatch(/^SequencePatternEnv \(OpenEnv 127\.0\.0\.1:\d+\)$/);
    expect(view.envs[0]!.episodes).toHaveLength(4);
    // Each row links to the episode kept for it (runtime openenv), which the episode view opens.
    for (const row of view.envs[0]!.episodes) {
      expect(row.episodeId).not.toBeNull();
      const ep = await call<{ episode: { runtime: string; seed: number | null; hintEnabled: boolean }; steps: unknown[] }>('episodes.get', { id: row.episodeId });
      expect(ep.episode).toMatchObject({ runtime: 'openenv', seed: row.seed, hintEnabled: row.hint });
      expect(ep.steps.length).toBeGreaterThan(1);
    }
    expect(view.envs[0]!.rHint).not.toBeNull();
    expect(view.envs[0]!.rNoHint).not.toBeNull();
    // The endpoint kept as given, so a resume plays with the same settings.
    expect(view.run.config.endpoint).toMatchObject({ baseUrl: model.url, model: 'stand-in', openenv: new URL(served.url).href });
  });

  it('stops on Cancel (the Runs page\'s call) with status cancelled, keeps what finished, and Resume plays the rest', async () => {
    let release!: () => void;
    gate = new Promise<void>((ok) => (release = ok));
    openGate = release;
    const before = model.requests.length;
    const playing = call<ModelRun>('openenv.remote.play', { runId: 'remote-cancel', url: served.url, endpoint: endpoint(model.url), seeds: 3, arms: ['nohint'], maxTurns: 2 });
    // The model has been asked (and is held): the run is under way.
    while (model.requests.length === before) await new Promise((r) => setTimeout(r, 20));
    expect(await call('episodes.regretCancel', { runId: 'remote-cancel' })).toEqual({ cancelled: true });
    const r = await playing;
    gate = null;
    release();
    expect(r.status).toBe('cancelled');
    expect(r.cancelled).toBe(true);
    // The episode cut by the Cancel is not recorded as a failure: nothing finished.
    expect(r.episodes).toEqual([]);
    const view = await call<{ run: { status: string }; live: boolean }>('runs.get', { id: 'remote-cancel' });
    expect(view.run.status).toBe('cancelled');
    expect(view.live).toBe(false);
    // A second Cancel finds nothing running.
    expect(await call('episodes.regretCancel', { runId: 'remote-cancel' })).toEqual({ cancelled: false });

    const resumed = await call<ModelRun>('runs.resume', { id: 'remote-cancel' });
    expect(resumed.status).toBe('done');
    expect(resumed.episodes.map((e) => [e.hint, e.seed, e.failed])).toEqual([
      [false, 0, false],
      [false, 1, false],
      [false, 2, false],
    ]);
  });

  it('plays with the embedded model (`local`, the endpoint the app\'s model plays take) on both arms', async () => {
    const r = await call<ModelRun>('openenv.remote.play', { runId: 'remote-local', url: served.url, endpoint: { baseUrl: 'local', model: DEFAULT_LOCAL_MODEL.name, maxTokens: 16, concurrency: 1, retries: 0 }, seeds: 1, arms: ['hint', 'nohint'], maxTurns: 1 });
    expect(r.status).toBe('done');
    expect(r.model).toBe(DEFAULT_LOCAL_MODEL.name);
    expect(r.episodes.map((e) => [e.hint, e.seed, e.failed, e.error]).sort((x, y) => Number(y[0]) - Number(x[0]))).toEqual([
      [true, 0, false, null],
      [false, 0, false, null],
    ]);
    const view = await call<{ run: { endpoint: string } }>('runs.get', { id: 'remote-local' });
    expect(view.run.endpoint).toBe('local');
  });

  it('plays the game asked for on a server that serves several: its hash, its name, its text; a resume keeps it', async () => {
    const data2 = join(tmp.dir, 'served2');
    for (const g of [GAME, join(ROOT, 'resources', 'seed-pack', 'games', 'game_00000_002_logical_deduction.py')]) expect((await runCli(['import', g, '--data-dir', data2, '--quiet'])).code).toBe(0);
    const two = await serveEnv(['1', '2', '--data-dir', data2, '--seeds', '2', '--runtime', 'cpython', '--max-turns', '2']);
    const asked: string[] = [];
    const m2 = await startStandIn((b) => (asked.push(firstUser(b)), { content: '\\boxed{1}' }));
    try {
      const d = await call<{ url: string; games: { env: string; name: string }[] }>('openenv.remote.describe', { url: two.url });
      expect(d.games.length).toBe(2);
      const [, second] = d.games;
      await call<ModelRun>('openenv.remote.play', { runId: 'remote-second', url: two.url, endpoint: endpoint(m2.url), seeds: 1, seedStart: 0, arms: ['nohint'], maxTurns: 1, env: second!.env });
      const view = await call<{ run: { hashes: string[]; config: { endpoint: Record<string, unknown> } }; envs: { envName: string | null }[] }>('runs.get', { id: 'remote-second' });
      expect(view.run.hashes).toEqual([remoteHash(two.url, { env: second!.env })]);
      expect(view.run.config.endpoint.openenvGame).toBe(second!.env);
      expect(view.envs[0]!.envName).toBe(`${second!.name} (OpenEnv 127.0.0.1:${two.port})`);
      // What the model read is the second game's first observation, not the first game's.
      const shown = await svcEpisodeText(two.url, second!.env);
      expect(asked[0]).toContain(shown.slice(0, 80));
      await call<ModelRun>('runs.resume', { id: 'remote-second' });
      expect((await call<{ run: { hashes: string[] } }>('runs.get', { id: 'remote-second' })).run.hashes).toEqual(view.run.hashes);
      await expect(call('openenv.remote.play', { url: two.url, endpoint: endpoint(m2.url), seeds: 1, arms: ['nohint'], env: 'e'.repeat(64) })).rejects.toThrow(/serves no game eeeeeeeeeeee/);
    } finally {
      await m2.close();
      await two.stop();
    }
  });

  it('refuses the hinted arm where the server has no hint, and a URL where nothing answers, before any record', async () => {
    // Pyodide: this server plays nothing, and a CPython one stopped while its fork server still starts does not exit (seen here).
    const off = await serveEnv(['1', '--data-dir', serverData, '--seeds', '2', '--runtime', 'pyodide', '--hint', 'off']);
    try {
      await expect(call('openenv.remote.play', { runId: 'remote-off', url: off.url, endpoint: endpoint(model.url), arms: ['hint'] })).rejects.toThrow(/unhinted episodes only/);
    } finally {
      await off.stop();
    }
    await expect(call('openenv.remote.play', { runId: 'remote-dead', url: off.url, endpoint: endpoint(model.url) })).rejects.toThrow(/cannot reach/);
    await expect(call('runs.get', { id: 'remote-off' })).rejects.toThrow(/No run/);
    await expect(call('runs.get', { id: 'remote-dead' })).rejects.toThrow(/No run/);
  });
});

describe('openenv.remote.play against a hostile OpenEnv server', () => {
  let hostile: Server;
  let base: string;
  const sockets = new Set<WebSocket>();
  const SCHEMA = { action: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] }, observation: { type: 'object' }, state: {} };

  beforeAll(async () => {
    hostile = createServer((req, res) => {
      const path = req.url ?? '/';
      if (path === '/health') return res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"status":"healthy"}');
      if (path === '/metadata') return res.writeHead(200).end('{"name":"hostile"}');
      if (path === '/schema') return res.writeHead(200).end(JSON.stringify(SCHEMA));
      res.writeHead(404).end('{"detail":"Not Found"}');
    });
    const wss = new WebSocketServer({ noServer: true });
    hostile.on('upgrade', (req, socket, head) =>
      wss.handleUpgrade(req, socket, head, (ws) => {
        sockets.add(ws);
        ws.on('close', () => sockets.delete(ws));
        let seed = 0;
        ws.on('message', (d) => {
          const msg = JSON.parse(d.toString()) as { type?: string; data?: { seed?: number } };
          const obs = (text: string, reward: number, done: boolean) => ws.send(JSON.stringify({ type: 'observation', data: { observation: { text }, reward, done } }));
          if (msg.type === 'close') return ws.close();
          if (msg.type === 'reset') {
            seed = msg.data?.seed ?? 0;
            return obs(`seed ${seed}: say something`, 0, false);
          }
          // Seed 0: the connection drops mid-episode; seed 1: garbage instead of a frame; seed 2 plays well.
          if (seed === 0) return ws.terminate();
          if (seed === 1) return ws.send('<html>502 Bad Gateway</html>');
          return obs('well said', 1, true);
        });
      }),
    );
    await new Promise<void>((ok) => hostile.listen(0, '127.0.0.1', ok));
    base = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const w of sockets) w.terminate();
    hostile.closeAllConnections();
    await new Promise<void>((ok) => hostile.close(() => ok()));
  });

  it('records a dropped or garbled episode as failed with its error; the run ends and keeps the good one', async () => {
    const r = await call<ModelRun>('openenv.remote.play', { runId: 'remote-hostile', url: base, endpoint: endpoint(model.url), seeds: 3, arms: ['nohint'], maxTurns: 3 });
    expect(r.status).toBe('done');
    expect(r.failedText).toBe('2 of 3 episodes failed');
    const [dropped, garbled, good] = r.episodes;
    expect(dropped).toMatchObject({ seed: 0, failed: true, return: null, endedBy: 'error' });
    expect(dropped!.error).toMatch(/closed the session|connection/);
    expect(garbled).toMatchObject({ seed: 1, failed: true, return: null, endedBy: 'error' });
    expect(garbled!.error).toMatch(/JSON/);
    expect(good).toMatchObject({ seed: 2, failed: false, return: 1, endedBy: 'env', error: null });
    const view = await call<{ run: { status: string }; envs: { envName: string | null; episodes: unknown[] }[] }>('runs.get', { id: 'remote-hostile' });
    expect(view.run.status).toBe('done');
    expect(view.envs[0]!.envName).toMatch(/^hostile \(OpenEnv 127\.0\.0\.1:\d+\)$/);
    expect(view.envs[0]!.episodes).toHaveLength(3);
  });
});
