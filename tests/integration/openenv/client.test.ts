/**
 * The workbench's OpenEnv client (core/openenv/client.ts) against our own `serve-env` as its own
 * process: an episode it plays equals the workbench's replay of that game and seed (unhinted and
 * hinted), the wire audit passes there, and `openenv-play --endpoint local` (the embedded model)
 * stores a model run whose environment is the URL.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StepView } from '../../../core/api/calls/episodes';
import { describeServer, ServerError, WireSession } from '../../../core/openenv/client';
import { pinOf, playRemote, scriptedActor } from '../../../core/openenv/remotePlay';
import { remoteHash } from '../../../core/openenv/remoteRun';
import { auditWire } from '../../../core/openenv/wireAudit';
import { tempDir } from '../../helpers/tmp';
import { openDatabase } from '../../../core/memory/db';
import { cliReplay, ROOT, runCli, serveEnv, type Served } from './serveEnvHelpers';

const GAME = join(ROOT, 'resources', 'seed-pack', 'games', 'game_00000_001_pattern_recognition.py');
const HINT = readFileSync(GAME.replace(/\.py$/, '_hint.txt'), 'utf8');
const tmp = tempDir('spade-openenv-client-');
const data = join(tmp.dir, 'data');
let server: Served;

beforeAll(async () => {
  const imp = await runCli(['import', GAME, '--data-dir', data, '--quiet']);
  expect(imp.code, imp.err).toBe(0);
  server = await serveEnv(['1', '--data-dir', data, '--seeds', '4', '--runtime', 'cpython', '--max-turns', '6']);
});
afterAll(async () => {
  await server?.stop();
  tmp.cleanup();
});

function replayOf(seed: number, actions: string[], hint: boolean): Promise<StepView[]> {
  return cliReplay(tmp.dir, GAME, HINT, seed, actions, hint);
}

describe('the OpenEnv client against serve-env', () => {
  it("reads the server: healthy, its schema's text action, and its hint mode from GET /tasks", async () => {
    const info = await describeServer(server.url);
    expect(info.healthy).toBe(true);
    expect(info.metadata.name).toBe('spade-workbench');
    expect(info.textField).toBe('message');
    expect(info.hintMode).toBe('both');
    expect(info.tasks!.tasks.length).toBe(8);
  });

  it("plays episodes equal to the workbench's own replay of the game and seed, unhinted and hinted", async () => {
    const info = await describeServer(server.url);
    const actions = ['I would say \\boxed{0}', 'maybe \\boxed{7}', '\\boxed{-1}', '\\boxed{2}', '\\boxed{3}'];
    for (const [seed, hint] of [[3, false], [2, true]] as const) {
      const s = await WireSession.open(server.url);
      const ep = await playRemote(s, info, { seed, hint, maxTurns: 10, actor: scriptedActor(actions), reset: pinOf(info) });
      // A step after the end is the server's error, and the session stays.
      const after = await s.step({ message: '\\boxed{1}' }).then(
        () => null,
        (e: unknown) => e,
      );
      const state = await s.state();
      await s.close();
      expect(after).toBeInstanceOf(ServerError);
      expect((after as ServerError).serverCode).toBe('EXECUTION_ERROR');
      expect(state.step_count).toBe(ep.turns.length - 1);
      expect(ep.endedBy).toBe('done');
      const [reset, ...steps] = await replayOf(seed, actions.slice(0, ep.turns.length - 1), hint);
      expect(ep.turns[0]!.observation!.text).toBe(reset!.agentObservation ?? reset!.observation);
      if (hint) expect(String(ep.turns[0]!.observation!.text).endsWith(`\n\nHINT: ${HINT}`)).toBe(true);
      expect(ep.turns.length - 1).toBe(steps.length);
      ep.turns.slice(1).forEach((t, i) => {
        const r = steps[i]!;
        expect(t.observation!.text).toBe(r.spade!.observation);
        expect(t.observation!.step_reward).toEqual(r.spade!.reward);
        expect(t.done).toBe(i === steps.length - 1);
      });
    }
  });

  it('passes the wire audit: determinism, seed use, malformed actions, reward range', async () => {
    const a = await auditWire(server.url);
    expect(a.checks.map((c) => [c.id, c.status])).toEqual([
      ['wire.determinism', 'pass'],
      ['wire.seed_use', 'pass'],
      ['wire.malformed_action', 'pass'],
      ['wire.reward_range', 'pass'],
    ]);
    expect(a.verdict).toBe('pass');
    expect(a.server.hintMode).toBe('both');
  });

  it('`openenv-play --endpoint local` plays the embedded model on both arms and stores it as a model run', async () => {
    const r = await runCli(['openenv-play', '--url', server.url, '--endpoint', 'local', '--seeds', '1', '--hint', 'both', '--max-turns', '2', '--max-tokens', '16', '--data-dir', data, '--json']);
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out) as { run_id: string; status: string; episodes: { seed: number; hint: boolean; error: string | null; turns: number }[] };
    expect(out.status).toBe('done');
    expect(out.episodes.map((e) => [e.hint, e.seed, e.error])).toEqual([
      [true, 0, null],
      [false, 0, null],
    ]);
    const shown = await runCli(['runs', 'show', out.run_id, '--data-dir', data, '--json']);
    expect(shown.code, shown.err).toBe(0);
    const view = JSON.parse(shown.out) as { run: { runtime: string; hashes: string[]; model: string }; envs: { envHash: string; envName: string; okHint: number; okNoHint: number; rHint: number | null; rNoHint: number | null }[] };
    expect(view.run.runtime).toBe('openenv');
    expect(view.run.hashes).toEqual([remoteHash(new URL(server.url).href, pinOf(await describeServer(server.url)))]);
    expect(view.envs[0]).toMatchObject({ okHint: 1, okNoHint: 1 });
    // The server's hint counts as the run's hint, so the hinted arm is measured (not "hint generation failed").
    expect(view.envs[0]!.rHint).not.toBeNull();
    expect(view.envs[0]!.rNoHint).not.toBeNull();
    // Named by the served game (serve-env's first task, the one played), then where it was served.
    const game = (await describeServer(server.url)).tasks!.tasks[0]!.env_name as string;
    expect(game).toMatch(/Env$/);
    expect(view.envs[0]!.envName).toBe(`${game} (OpenEnv 127.0.0.1:${server.port})`);
    // Each episode is kept as a record (runtime openenv) the run's row links to, its turns as played.
    const db = openDatabase(join(data, 'workbench.sqlite'));
    try {
      const rows = db.prepare(`SELECT r.hint, r.episode_id, e.runtime, e.hint_enabled, e.step_count FROM model_run_episodes r JOIN episodes e ON e.id = r.episode_id WHERE r.run_id = ? ORDER BY r.hint DESC`).all(out.run_id) as { hint: number; episode_id: number; runtime: string; hint_enabled: number; step_count: number }[];
      expect(rows.map((x) => [x.hint, x.runtime, x.hint_enabled])).toEqual([
        [1, 'openenv', 1],
        [0, 'openenv', 0],
      ]);
      expect(rows.map((x) => x.step_count)).toEqual([...out.episodes].sort((a, b) => Number(b.hint) - Number(a.hint)).map((e) => e.turns + 1));
    } finally {
      db.close();
    }
  });

  it('refuses the hint on a server that serves unhinted episodes only, before playing', async () => {
    const off = await serveEnv(['1', '--data-dir', data, '--seeds', '2', '--runtime', 'cpython', '--hint', 'off']);
    try {
      const r = await runCli(['openenv-play', '--url', off.url, '--hint', 'on']);
      expect(r.code).not.toBe(0);
      expect(r.err).toMatch(/unhinted episodes only/);
    } finally {
      await off.stop();
    }
  });
});
