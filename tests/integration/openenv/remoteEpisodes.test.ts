/**
 * An environment another OpenEnv server serves, opened as a recorded episode (core/openenv/remoteEpisodes.ts
 * behind EpisodeService): against our own `serve-env` as its own process, its record equals the
 * workbench's own replay of that game and seed (unhinted and hinted), it re-plays on a fresh session
 * after its session is gone, and Replay & compare finds no divergence; against hostile servers (one that
 * answers differently every time, one that drops the socket, one that never answers) each gets a clear
 * error or a flagged divergence, and nothing recorded is lost.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { WebSocketServer } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StepView } from '../../../core/api/calls/episodes';
import { openDatabase, type Db } from '../../../core/memory/db';
import { EpisodeStore } from '../../../core/episodes/episodeStore';
import { EpisodeService } from '../../../core/episodes/service';
import type { RuntimePort } from '../../../core/episodes/session';
import { recordRemoteEpisode, RemoteEpisodes } from '../../../core/openenv/remoteEpisodes';
import { pinOf, playRemote, scriptedActor } from '../../../core/openenv/remotePlay';
import { remoteHash } from '../../../core/openenv/remoteRun';
import { describeServer, WireSession, type ClientLimits } from '../../../core/openenv/client';
import { tempDir } from '../../helpers/tmp';
import { cliReplay, ROOT, runCli, serveEnv, type Served } from './serveEnvHelpers';

const GAME = join(ROOT, 'resources', 'seed-pack', 'games', 'game_00000_001_pattern_recognition.py');
const HINT = readFileSync(GAME.replace(/\.py$/, '_hint.txt'), 'utf8');
const LIMITS: ClientLimits = { connectTimeoutMs: 2000, messageTimeoutMs: 1500, maxReplyBytes: 64 * 1024 };
const tmp = tempDir('spade-remote-episodes-');
const data = join(tmp.dir, 'data');
let server: Served;
let db: Db;
let svc: EpisodeService;

/** No local game is played here: every call reaching the runtime is a defect of the dispatch. */
const noLocalRuntime: RuntimePort = {
  open: () => Promise.reject(new Error('a remote episode reached the local runtime')),
  call: () => Promise.reject(new Error('a remote episode reached the local runtime')),
  close: () => Promise.resolve(),
};

// The hostile server: /MODE/ws answers each message by its mode.
type Mode = 'random' | 'drop' | 'silent' | 'refuse';
let hostile: Server;
let hostileBase: string;

beforeAll(async () => {
  const imp = await runCli(['import', GAME, '--data-dir', data, '--quiet']);
  expect(imp.code, imp.err).toBe(0);
  server = await serveEnv(['1', '--data-dir', data, '--seeds', '4', '--runtime', 'cpython', '--max-turns', '6']);
  db = openDatabase(join(tmp.dir, 'client.sqlite'));
  svc = new EpisodeService({ store: new EpisodeStore(db), catalog: { byHash: () => null } as never, runtime: noLocalRuntime, defaults: () => ({ maxTurns: 30 }), remote: (ctx) => new RemoteEpisodes(ctx, LIMITS) });

  hostile = createServer((req, res) => {
    const path = req.url ?? '/';
    if (path.endsWith('/health')) return res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"status":"healthy"}');
    if (path.endsWith('/metadata')) return res.writeHead(200).end('{"name":"hostile"}');
    if (path.endsWith('/schema')) return res.writeHead(200).end(JSON.stringify({ action: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] }, observation: { type: 'object' }, state: {} }));
    res.writeHead(404).end('{"detail":"Not Found"}');
  });
  const wss = new WebSocketServer({ noServer: true });
  hostile.on('upgrade', (req, sock, head) => {
    const mode = (req.url ?? '').split('/')[1] as Mode;
    wss.handleUpgrade(req, sock, head, (ws) => {
      let n = 0;
      ws.on('message', (d) => {
        const msg = JSON.parse(d.toString()) as { type?: string };
        const obs = (text: string, reward: number, done: boolean) => ws.send(JSON.stringify({ type: 'observation', data: { observation: { text }, reward, done } }));
        if (msg.type === 'close') return ws.close();
        if (msg.type === 'state') return ws.send(JSON.stringify({ type: 'state', data: { step_count: n } }));
        if (msg.type === 'reset') return obs(mode === 'random' ? `start ${Math.random()}` : 'start', 0, false);
        n++;
        if (mode === 'refuse' && n === 2) return ws.send(JSON.stringify({ type: 'error', data: { code: 'EXECUTION_ERROR', message: 'the action is malformed' } }));
        if (mode === 'drop' && n >= 2) return ws.terminate();
        if (mode === 'silent' && n >= 2) return;
        obs(`turn ${n}`, 0, false);
      });
    });
  });
  await new Promise<void>((ok) => hostile.listen(0, '127.0.0.1', ok));
  hostileBase = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await svc?.closeAll();
  db?.close();
  await server?.stop();
  await new Promise<void>((ok) => (hostile ? hostile.close(() => ok()) : ok()));
  tmp.cleanup();
});

function replayOf(seed: number, actions: string[], hint: boolean): Promise<StepView[]> {
  return cliReplay(tmp.dir, GAME, HINT, seed, actions, hint);
}

describe('an OpenEnv environment as a recorded episode', () => {
  it("records what serve-env answers, equal to the workbench's own replay, unhinted and hinted", async () => {
    const actions = ['I would say \\boxed{0}', 'maybe \\boxed{7}'];
    for (const [seed, hint] of [[3, false], [2, true]] as const) {
      const opened = await svc.openRemote({ url: server.url, seed, hint });
      const id = opened.episode.id;
      expect(opened.episode).toMatchObject({ runtime: 'openenv', origin: 'played', envHash: remoteHash(server.url, pinOf(await describeServer(server.url))), live: true, hintEnabled: hint, hintText: null });
      expect(opened.episode.envName).toBe(`${(await describeServer(server.url)).tasks!.tasks[0]!.env_name as string} (OpenEnv 127.0.0.1:${server.port})`);
      for (const a of actions) await svc.act(id, a, true);
      const { steps } = svc.get(id);
      const [reset, ...mine] = await replayOf(seed, actions, hint);
      expect(steps[0]!.observation).toBe(reset!.agentObservation ?? reset!.observation);
      // The server's hint is in its observation; nothing of ours is injected a second time.
      if (hint) expect(steps[0]!.agentObservation!.endsWith(`\n\nHINT: ${HINT}`)).toBe(true);
      expect(steps[0]!.agentObservation!.split('HINT:').length).toBe(hint ? 2 : 1);
      expect(steps.slice(1).map((s) => s.observation)).toEqual(mine.map((s) => s.spade!.observation));
      // The server's own state rides in the step's state, beside the whole observation.
      const d = svc.inspect(id, 2);
      expect(d.changes).toContainEqual({ path: 'server_state["step_count"]', kind: 'changed', before: '1', after: '2' });
    }
  });

  it('goes on after its session is gone by re-playing the record on a fresh one, and replays with no divergence', async () => {
    const { episode } = await svc.openRemote({ url: server.url, seed: 1, hint: false });
    await svc.act(episode.id, '\\boxed{5}', true);
    expect(await svc.close(episode.id)).toBe(true);
    expect(svc.get(episode.id).episode.live).toBe(false);
    const r = await svc.act(episode.id, '\\boxed{6}', true);
    expect(r.episode.live).toBe(true);
    expect(svc.get(episode.id).steps.map((s) => s.action)).toEqual([null, '\\boxed{5}', '\\boxed{6}']);
    await svc.resetAgain(episode.id, 2);
    const rep = await svc.replay(episode.id);
    expect(rep.divergence).toBeNull();
    expect(rep.compared).toBe(4);
    expect(svc.get(rep.replayId).episode).toMatchObject({ origin: 'replay', runtime: 'openenv', stepCount: 4 });
    // Scrubbing reads the record: the server's session is not moved back.
    const s = await svc.scrub(episode.id, 1);
    expect(s.detail.step.action).toBe('\\boxed{5}');
    expect(s.reexecuted).toBe(0);
  });

  it("keeps a model run's episode (played with playRemote) as a record that replays the same", async () => {
    const info = await describeServer(server.url);
    const ws = await WireSession.open(server.url);
    const ep = await playRemote(ws, info, { seed: 2, hint: true, maxTurns: 3, actor: scriptedActor(['\\boxed{1}', '\\boxed{2}']), reset: pinOf(info) });
    await ws.close();
    const id = recordRemoteEpisode(new EpisodeStore(db), info, ep, { maxTurns: 3, policy: { kind: 'llm', model: 'm' }, label: 'a model run', pin: pinOf(info) });
    const { episode, steps } = svc.get(id);
    expect(episode).toMatchObject({ runtime: 'openenv', hintEnabled: true, stepCount: 3, live: false });
    expect(steps.map((s) => s.action)).toEqual([null, '\\boxed{1}', '\\boxed{2}']);
    const rep = await svc.replay(id);
    expect(rep.divergence).toBeNull();
    expect(rep.compared).toBe(3);
  });

  it("plays a server that wants a token with it, and never writes the token to the library", async () => {
    const other = await serveEnv(['1', '--data-dir', data, '--host', '127.0.0.2', '--runtime', 'cpython', '--seeds', '2']);
    try {
      const withToken = `${other.url}?token=${other.token!}`;
      const { episode } = await svc.openRemote({ url: withToken, seed: 0, hint: false });
      await svc.act(episode.id, '\\boxed{3}', true);
      await svc.close(episode.id);
      // Re-played on a fresh session (with the token this process holds) to go on.
      await svc.act(episode.id, '\\boxed{4}', true);
      expect(svc.get(episode.id).episode.stepCount).toBe(3);
      expect((svc.meta(episode.id).meta.openenv as { url: string }).url).toBe(new URL(other.url).href);
      const rows = db.prepare(`SELECT count(*) AS n FROM episodes WHERE meta LIKE ? OR label LIKE ? OR env_name LIKE ?`).get(...Array(3).fill(`%${other.token!}%`)) as { n: number };
      expect(rows.n).toBe(0);
      expect(episode.envHash).toBe(remoteHash(other.url, pinOf(await describeServer(withToken))));
    } finally {
      await other.stop();
    }
  });

  it('tells two games of one server apart: the game is in the hash, the name and every re-play; one it does not serve is refused', async () => {
    const game2 = join(ROOT, 'resources', 'seed-pack', 'games', 'game_00000_002_logical_deduction.py');
    const data2 = join(tmp.dir, 'data2');
    for (const g of [GAME, game2]) expect((await runCli(['import', g, '--data-dir', data2, '--quiet'])).code).toBe(0);
    const two = await serveEnv(['1', '2', '--data-dir', data2, '--seeds', '2', '--runtime', 'cpython']);
    try {
      const info = await describeServer(two.url);
      const games = [...new Map(info.tasks!.tasks.map((t) => [t.env_hash as string, t.env_name as string])).entries()];
      expect(games.length).toBe(2);
      const first = await svc.openRemote({ url: two.url, seed: 0, hint: false });
      const second = await svc.openRemote({ url: two.url, seed: 0, hint: false, env: games[1]![0] });
      expect(first.episode.envName).toBe(`${games[0]![1]} (OpenEnv 127.0.0.1:${two.port})`);
      expect(second.episode.envName).toBe(`${games[1]![1]} (OpenEnv 127.0.0.1:${two.port})`);
      expect(second.episode.envHash).not.toBe(first.episode.envHash);
      expect(second.steps[0]!.observation).not.toBe(first.steps[0]!.observation);
      // After its session is gone the record re-plays on its own game, not the server's first.
      await svc.act(second.episode.id, '\\boxed{1}', true);
      await svc.close(second.episode.id);
      await svc.act(second.episode.id, '\\boxed{2}', true);
      expect((await svc.replay(second.episode.id)).divergence).toBeNull();
      await expect(svc.openRemote({ url: two.url, seed: 0, hint: false, env: 'f'.repeat(64) })).rejects.toThrow(/serves no game ffffffffffff/);
    } finally {
      await two.stop();
    }
  });

  it('flags a server that answers differently: Replay & compare at the reset, and no silent re-play', async () => {
    const { episode } = await svc.openRemote({ url: `${hostileBase}/random`, seed: 0, hint: false });
    await svc.act(episode.id, 'a', true);
    const rep = await svc.replay(episode.id);
    expect(rep.divergence?.idx).toBe(0);
    expect(rep.divergence?.fields).toContain('observation');
    expect(svc.get(episode.id).episode.divergenceStep).toBe(0);
    await svc.close(episode.id);
    await expect(svc.act(episode.id, 'b', true)).rejects.toThrow(/answered step 0 differently/);
    expect(svc.get(episode.id).steps.length).toBe(2);
    // A reset needs no history: it starts again on a fresh session.
    const r = await svc.resetAgain(episode.id, 0);
    expect(r.steps[0]!.kind).toBe('reset');
  });

  it("records a server's refusal as the step's error, and keeps the record when the server drops the socket", async () => {
    const refused = await svc.openRemote({ url: `${hostileBase}/refuse`, seed: 0, hint: false });
    await svc.act(refused.episode.id, 'ok', true);
    const r = await svc.act(refused.episode.id, 'bad', true);
    expect(r.steps[0]!.error).toMatchObject({ message: expect.stringContaining('the action is malformed') });
    await svc.act(refused.episode.id, 'again', true);
    expect(svc.get(refused.episode.id).steps.length).toBe(4);

    const dropped = await svc.openRemote({ url: `${hostileBase}/drop`, seed: 0, hint: false });
    await svc.act(dropped.episode.id, 'one', true);
    await expect(svc.act(dropped.episode.id, 'two', true)).rejects.toThrow(/closed|session|dropped/i);
    const after = svc.get(dropped.episode.id);
    expect(after.steps.map((s) => s.action)).toEqual([null, 'one']);
    expect(after.episode.live).toBe(false);
  });

  it('Cancel stops a step the server never answers, with the record as it was', async () => {
    const { episode } = await svc.openRemote({ url: `${hostileBase}/silent`, seed: 0, hint: false });
    await svc.act(episode.id, 'one', true);
    const p = svc.act(episode.id, 'two', true, undefined, 'req-silent');
    setTimeout(() => svc.cancel('req-silent'), 100);
    // Cancelled, not the client's own time limit ('timeout') ending it later.
    await expect(p).rejects.toMatchObject({ code: 'cancelled' });
    expect(svc.get(episode.id).steps.length).toBe(2);
  });

  it('refuses what the server cannot do before any record: a hint it has not, a policy of ours', async () => {
    const before = svc.list({ limit: 1000, offset: 0 }).total;
    await expect(svc.openRemote({ url: `${hostileBase}/refuse`, seed: 0, hint: true })).rejects.toThrow(/no hint/);
    await expect(svc.openRemote({ url: 'http://127.0.0.1:1', seed: 0, hint: false })).rejects.toThrow();
    expect(svc.list({ limit: 1000, offset: 0 }).total).toBe(before);
    const { episode } = await svc.openRemote({ url: `${hostileBase}/refuse`, seed: 0, hint: false });
    await expect(svc.run(episode.id, { kind: 'random', lo: 0, hi: 9 }, { kind: 'done' }, 5)).rejects.toThrow(/stepped by hand/);
  });
});
