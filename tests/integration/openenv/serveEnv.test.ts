/**
 * `spade-workbench serve-env` judged by OpenEnv's own tools (PyPI `openenv`, pinned, in its own venv):
 * `openenv validate --url ... --level runtime --json` passes, and its GenericEnvClient plays episodes
 * whose observations, rewards and end equal the workbench's own replay of that game and seed, with
 * and without the hint; each episode is recorded and replays without divergence.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDataDir } from '../../../core/memory/cliDb';
import { memoryCatalog } from '../../../core/episodes/catalog';
import { EpisodeService } from '../../../core/episodes/service';
import { EpisodeStore } from '../../../core/episodes/episodeStore';
import { episodeReturn } from '../../../core/episodes/spade';
import { RuntimeService } from '../../../core/runtime/service';
import type { StepView } from '../../../core/api/calls/episodes';
import { tempDir } from '../../helpers/tmp';
import { cliReplay, openenvVenv, python, ROOT, runCli, serveEnv, type Served } from './serveEnvHelpers';

const GAME = join(ROOT, 'resources', 'seed-pack', 'games', 'game_00000_001_pattern_recognition.py');
const HINT = readFileSync(GAME.replace(/\.py$/, '_hint.txt'), 'utf8');
const PLAY = join(ROOT, 'tests', 'helpers', 'openenv_play.py');
const tmp = tempDir('spade-serve-env-');
const data = join(tmp.dir, 'data');
// A game whose rewards tell SPADE's return rule apart from a sum or the last raw reward: 0.3 on a
// step that goes on, 2.5 (clamped to 1) on the one that terminates, 0.7 forever while it waits.
const CLAMP = join(tmp.dir, 'game_clamp.py');
const CLAMP_SOURCE = `class ClampEnv:
    def reset(self, seed=None):
        self.n = 0
        return "say go or wait", {}

    def step(self, action):
        self.n += 1
        if "wait" in action:
            return "waiting %d" % self.n, 0.7, False, False, {}
        if self.n >= 2:
            return "done", 2.5, True, False, {"n": self.n}
        return "once more", 0.3, False, False, {}

    def solution(self):
        return "go"
`;
let venv: string;
let server: Served;

beforeAll(async () => {
  venv = openenvVenv();
  const imp = await runCli(['import', GAME, '--data-dir', data, '--quiet']);
  expect(imp.code, imp.err).toBe(0);
  writeFileSync(CLAMP, CLAMP_SOURCE);
  const imp2 = await runCli(['import', CLAMP, '--data-dir', data, '--quiet']);
  expect(imp2.code, imp2.err).toBe(0);
  server = await serveEnv(['1', '2', '--data-dir', data, '--seeds', '4', '--runtime', 'cpython', '--max-turns', '6']);
});
afterAll(async () => {
  await server?.stop();
  tmp.cleanup();
});

interface Result {
  observation: Record<string, unknown>;
  reward: number | null;
  done: boolean;
}
interface Played {
  reset: Result;
  steps: Result[];
  state: Record<string, unknown>;
  after_end: string | null;
}

function replayOf(seed: number, actions: string[], hint: boolean, game = GAME): Promise<StepView[]> {
  return cliReplay(tmp.dir, game, HINT, seed, actions, hint);
}

function expectSame(played: Played, replay: StepView[]): void {
  const [reset, ...steps] = replay;
  expect(played.reset.observation.text).toBe(reset!.agentObservation ?? reset!.observation);
  expect(played.reset.done).toBe(false);
  expect(played.steps.length).toBe(steps.length);
  played.steps.forEach((p, i) => {
    const s = steps[i]!;
    expect(p.observation.text).toBe(s.spade!.observation);
    expect(p.observation.step_reward).toEqual(s.spade!.reward);
    expect(p.observation.terminated).toBe(s.spade!.terminated);
    expect(p.observation.truncated).toBe(s.spade!.truncated);
  });
  // The episode ends where SPADE's loop ends it, with SPADE's return as the reward.
  const last = steps.at(-1)!;
  expect(played.steps.at(-1)!.done).toBe(last.spade!.terminated || last.spade!.truncated);
  expect(played.steps.at(-1)!.reward).toBe(episodeReturn([{ kind: 'step', spade: last.spade! }]));
  for (const p of played.steps.slice(0, -1)) expect(p.reward).toBe(0);
}

describe('serve-env under OpenEnv', () => {
  it('passes `openenv validate --url ... --level runtime --json`', async () => {
    const r = await python(venv, [join(venv, 'bin', 'openenv'), 'validate', '--url', server.url, '--level', 'runtime', '--json']);
    expect(r.code, r.out + r.err).toBe(0);
    const report = JSON.parse(r.out) as { passed: boolean; mode: string; summary: { failed_criteria: string[]; total_count: number } };
    expect(report.summary.failed_criteria).toEqual([]);
    expect(report.passed).toBe(true);
    expect(report.mode).toBe('simulation');
    expect(report.summary.total_count).toBeGreaterThanOrEqual(6);
  });

  it("OpenEnv's client plays episodes equal to the workbench's replay of the game and seed, unhinted and hinted", async () => {
    const actions = ['I would say \\boxed{0}', 'maybe \\boxed{7}', '\\boxed{-1}', '\\boxed{2}', '\\boxed{3}'];
    for (const [seed, hint] of [[3, false], [2, true]] as const) {
      const r = await python(venv, [PLAY, server.url, JSON.stringify({ env: 'SequencePatternEnv', seed, hint }), JSON.stringify(actions)]);
      expect(r.code, r.err).toBe(0);
      const played = JSON.parse(r.out) as Played;
      expect(played.reset.observation.hint).toBe(hint);
      if (hint) expect(String(played.reset.observation.text).endsWith(`\n\nHINT: ${HINT}`)).toBe(true);
      const used = actions.slice(0, played.steps.length);
      expectSame(played, await replayOf(seed, used, hint));
      // A step after the end is OpenEnv's error, not a dead session.
      expect(played.steps.at(-1)!.done).toBe(true);
      expect(played.after_end).toMatch(/episode is over.*EXECUTION_ERROR/);
      expect(played.state.step_count).toBe(played.steps.length);
    }
  });

  it("gives SPADE's episode return as the reward: 0 until the end, the clamped last reward when terminated, 0 when the budget runs out", async () => {
    const go = await python(venv, [PLAY, server.url, JSON.stringify({ env: 'ClampEnv', seed: 0 }), JSON.stringify(['go', 'go', 'go'])]);
    expect(go.code, go.err).toBe(0);
    const g = JSON.parse(go.out) as Played;
    expect(g.steps.map((x) => [x.reward, x.observation.step_reward, x.done])).toEqual([
      [0, 0.3, false],
      [1, 2.5, true],
    ]);
    expectSame(g, await replayOf(0, ['go', 'go'], false, CLAMP));
    const wait = await python(venv, [PLAY, server.url, JSON.stringify({ env: 'ClampEnv', seed: 0 }), JSON.stringify(Array.from({ length: 10 }, () => 'wait'))]);
    expect(wait.code, wait.err).toBe(0);
    const w = JSON.parse(wait.out) as Played;
    // --max-turns 6: the sixth turn ends the episode unterminated, so SPADE's return is 0.
    expect(w.steps.length).toBe(6);
    expect(w.steps.at(-1)).toMatchObject({ reward: 0, done: true, observation: { step_reward: 0.7, terminated: false, ended_by: 'budget', episode_return: 0 } });
    expect(w.after_end).toMatch(/budget of 6 turns/);
  });

  it('records each episode in the library, and it replays without divergence', async () => {
    const r = await python(venv, [PLAY, server.url, JSON.stringify({ env: 'SequencePatternEnv', seed: 1 }), JSON.stringify(['\\boxed{5}', '\\boxed{6}', '\\boxed{7}'])]);
    expect(r.code, r.err).toBe(0);
    const played = JSON.parse(r.out) as Played;
    const id = played.reset.observation.workbench_episode as number;
    const { db } = openDataDir(data);
    const rt = new RuntimeService({ settings: () => ({ stepTimeoutSec: 30, maxTurns: 30, defaultRuntime: 'cpython' }) });
    const svc = new EpisodeService({ store: new EpisodeStore(db), catalog: memoryCatalog(db), runtime: rt, defaults: () => ({ maxTurns: 30 }) });
    try {
      const got = svc.get(id);
      expect(got.episode.seed).toBe(1);
      expect(got.steps.length).toBe(played.steps.length + 1);
      expect(got.steps.slice(1).map((s) => s.spade!.observation)).toEqual(played.steps.map((s) => s.observation.text));
      const report = await svc.replay(id);
      expect(report.divergence).toBeNull();
    } finally {
      await svc.closeAll();
      await rt.shutdown();
      db.close();
    }
  });
});
