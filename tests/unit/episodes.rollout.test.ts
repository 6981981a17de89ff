import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../core/memory/db';
import { memoryCatalog } from '../../core/episodes/catalog';
import { EpisodeService } from '../../core/episodes/service';
import { EpisodeStore } from '../../core/episodes/episodeStore';
import { episodeReturn, pyClamp, spadeOf, spadeRegret } from '../../core/episodes/spade';
import { injectHint } from '../../core/episodes/hint';
import { parseEpisodeLine } from '../../core/episodes/jsonl';
import { FakeRuntime, type FakeGame } from '../helpers/fakeRuntime';
import type { Player } from '../../core/episodes/regret';

function setup(make: () => FakeGame, opts: { withSpade?: boolean; maxTurns?: number; hint?: string } = {}) {
  const db = openDatabase(':memory:');
  const catalog = memoryCatalog(db);
  const rt = new FakeRuntime(make, opts);
  const svc = new EpisodeService({ store: new EpisodeStore(db), catalog, runtime: rt, defaults: () => ({ maxTurns: opts.maxTurns ?? 30 }) });
  const hash = catalog.add(`class FakeEnv:\n    pass  # ${Math.random()}\n`, 'fake', 'fake.py');
  return { svc, rt, hash, db };
}

/** A game that never ends by itself. */
const endless = (): FakeGame => ({ reset: () => 'start', step: () => ['go on', 0, false, false, {}] });

describe('SPADE return and episode end (pure)', () => {
  it('is 0 unless the last step terminated, else its reward clamped like Python max/min', () => {
    const st = (reward: number | 'NaN', terminated: boolean) => ({ kind: 'step' as const, spade: { observation: '', reward, terminated, truncated: false, info: {} } });
    expect(episodeReturn([st(0.5, false), st(0.7, false)])).toBe(0);
    expect(episodeReturn([st(0.5, false), st(3, true)])).toBe(1);
    expect(episodeReturn([st(-7, true)])).toBe(-1);
    // Python: max(-1.0, min(1.0, nan)) == 1.0
    expect(episodeReturn([st('NaN', true)])).toBe(1);
    expect(pyClamp(Number.NaN)).toBe(1);
    // a trailing tool turn, a max_tokens cut or a failed policy: not terminated
    expect(episodeReturn([st(1, true), { kind: 'tool' }])).toBe(0);
    expect(episodeReturn([st(1, true)], 'error')).toBe(0);
  });
  it("rebuilds SPADE's conversion when a reply has no spade object: truthy flags, raised and mis-shaped steps", () => {
    expect(spadeOf({ shape: 'tuple5', observation: null, reward: null, terminated: 1, truncated: 'yes', info: { a: 1, b: 'x' } })).toEqual({ observation: 'No observation', reward: 0, terminated: true, truncated: true, info: { a: 1 } });
    expect(spadeOf({ error: { message: 'boom' } })).toMatchObject({ observation: 'Error: boom', reward: -1, terminated: true, error: 'exception' });
    expect(spadeOf({ shape: 'other' })).toMatchObject({ observation: 'Invalid game response', reward: -1, terminated: true, error: 'shape' });
  });
  it('injects the hint verbatim, whitespace kept', () => {
    expect(injectHint('obs', '  try 3 \n')).toBe('obs\n\nHINT:   try 3 \n');
  });
  it("regret is R(hint) minus mean R(no hint), 0 when hint generation failed", () => {
    expect(spadeRegret({ hintReturns: [1, 0, 1, 1], noHintReturns: [0, 1] })).toEqual({ rHint: 0.75, rNoHint: 0.5, regret: 0.25 });
    expect(spadeRegret({ hintReturns: [1], noHintReturns: [0], hintFailed: true }).regret).toBe(0);
    expect(spadeRegret({ hintReturns: [], noHintReturns: [] }).regret).toBe(0);
  });
});

describe('the one rollout loop, against a stand-in runtime', () => {
  it('stops after the budget of agent turns (not 4x it) and scores the unfinished episode 0', async () => {
    const { svc, hash, rt } = setup(endless, { maxTurns: 7 });
    const r = await svc.regret({ hash, seeds: 1, seedStart: 0, policy: { kind: 'random', lo: 1, hi: 9 }, hintText: 'h' });
    const ep = svc.get(r.withoutHint.episodeIds[0]!);
    expect(ep.steps.filter((s) => s.kind === 'step')).toHaveLength(7);
    expect(r.withoutHint.returns).toEqual([0]);
    expect(rt.opened).toBe(rt.closed);
  });
  it('a truthy terminated (1) ends the episode where SPADE ends it, and the return is that reward', async () => {
    let n = 0;
    const { svc, hash } = setup(() => ({ reset: () => { n = 0; return 'go'; }, step: () => (++n === 3 ? ['won', 1, 1, false, {}] : ['more', 0, false, false, {}]) }));
    const r = await svc.regret({ hash, seeds: 1, seedStart: 0, policy: { kind: 'script', actions: Array(10).fill('\\boxed{1}'), extract: true }, hintText: 'h' });
    const ep = svc.get(r.withHint.episodeIds[0]!);
    expect(ep.steps.filter((s) => s.kind === 'step')).toHaveLength(3);
    expect(r.withHint.returns).toEqual([1]);
    expect(ep.episode.terminated).toBe(true);
    expect(ep.episode.totalReturn).toBe(1);
  });
  it('a step that raises is a -1 terminal step (return -1), with or without the harness conversion', async () => {
    for (const withSpade of [true, false]) {
      const { svc, hash } = setup(() => ({ reset: () => 'go', step: () => { throw new Error('bad move'); } }), { withSpade });
      const r = await svc.regret({ hash, seeds: 1, seedStart: 0, policy: { kind: 'random', lo: 1, hi: 100 }, hintText: 'h' });
      expect(r.withoutHint.returns).toEqual([-1]);
      expect(svc.get(r.withoutHint.episodeIds[0]!).episode.totalReturn).toBe(-1);
    }
  });
  it('interactive runs stop at the converted end and leave the session at the last recorded step', async () => {
    let n = 0;
    const { svc, hash } = setup(() => ({ reset: () => { n = 0; return 'go'; }, step: () => (++n === 2 ? ['won', 1, 'yes', false, {}] : ['more', 0, false, false, {}]) }));
    const ep = await svc.open({ hash, seed: 0, hint: false, label: '' });
    const ran = await svc.run(ep.episode.id, { kind: 'script', actions: Array(5).fill('a'), extract: false }, { kind: 'done' }, 100);
    expect(ran.stoppedBecause).toBe('terminated');
    expect(ran.steps).toHaveLength(3);
  });
  it('an interactive run stops at the budget of turns since the last reset, not at maxSteps', async () => {
    const { svc, hash } = setup(endless);
    const ep = await svc.open({ hash, seed: 0, hint: false, maxTurns: 5, label: '' });
    const ran = await svc.run(ep.episode.id, { kind: 'random', lo: 1, hi: 9 }, { kind: 'done' }, 100);
    expect(ran.steps.filter((s) => s.kind === 'step')).toHaveLength(5);
    expect(ran.stoppedBecause).toBe('budget of 5 turns');
  });
  it('a regret run cancelled mid-way resumes with the same runId: no episode lost or played twice', async () => {
    let svcRef: EpisodeService | null = null;
    let steps = 0;
    const { svc, hash, db } = setup(() => ({
      reset: () => 'go',
      step: () => {
        if (++steps === 9) svcRef!.regretCancel('r1');
        return ['done', 1, true, false, {}];
      },
    }));
    svcRef = svc;
    const first = await svc.regret({ hash, seeds: 10, seedStart: 0, policy: { kind: 'random', lo: 1, hi: 100 }, hintText: 'h', runId: 'r1', concurrency: 2 });
    expect(first.cancelled).toBe(true);
    const before = (db.prepare(`SELECT COUNT(*) n FROM episodes`).get() as { n: number }).n;
    expect(before).toBeLessThan(20);
    const second = await svc.regret({ hash, seeds: 10, seedStart: 0, policy: { kind: 'random', lo: 1, hi: 100 }, hintText: 'h', runId: 'r1', concurrency: 2 });
    expect(second.cancelled).toBe(false);
    const rows = db.prepare(`SELECT seed, hint_enabled h FROM episodes ORDER BY seed, h`).all() as { seed: number; h: number }[];
    expect(rows).toHaveLength(20);
    expect(new Set(rows.map((r) => `${r.seed}:${r.h}`)).size).toBe(20);
    expect(second.withHint.returns).toHaveLength(10);
    expect(second.regret).toBe(0);
  });
});

describe('regret runs load the next episode ahead', () => {
  it("opens a worker's next session in the background while its episode plays, sends the player's first call ahead once, and plays the same episodes", async () => {
    const game = (): FakeGame => ({ reset: (seed) => `seed ${seed}`, step: (a) => [`got ${a}`, a === '\\boxed{1}' ? 1 : 0, true, false, {}] });
    const { svc, rt, hash } = setup(game);
    const r = await svc.regret({ hash, seeds: 3, seedStart: 5, policy: { kind: 'script', actions: ['\\boxed{1}'], extract: false }, hintText: 'h', concurrency: 1 });
    expect(r.withHint.returns).toEqual([1, 1, 1]);
    const sessions = [...new Set(rt.log.map((e) => e.session))];
    expect(sessions).toHaveLength(6);
    // The first session is loaded before any look-ahead; every later one in the background.
    expect(rt.log.filter((e) => e.cmd === 'load').map((e) => e.background === true)).toEqual([true, true, true, true, true, true]);
    for (const [k, sid] of sessions.entries()) {
      const mine = rt.log.filter((e) => e.session === sid);
      // exactly the calls a player makes without look-ahead: load, one reset with the job's seed, its state and steps
      expect(mine.map((e) => e.cmd)).toEqual(['load', 'reset', 'state', 'play']);
      expect(mine[1]).toMatchObject({ seed: 5 + Math.floor(k / 2), background: true });
      expect(mine.slice(2).every((e) => e.background === undefined)).toBe(true);
      // ...and the next session was loaded before this episode's first step
      const next = sessions[k + 1];
      if (next) expect(rt.log.findIndex((e) => e.session === next)).toBeLessThan(rt.log.indexOf(mine[3]!));
    }
    // each episode waited on its own reset once: brought forward, never sent twice
    expect(rt.promoted).toEqual(sessions);
  });

  it('a player that announces nothing gets no calls ahead', async () => {
    const { svc, rt, hash } = setup(() => ({ reset: () => 'go', step: () => ['done', 1, true, false, {}] }));
    const plain: Player = async (session, arm) => {
      const reset = { ...(await session.reset(0, arm.seed)), state: null };
      return { steps: [reset], turns: [], endedBy: 'env', policy: { kind: 'plain' } };
    };
    await svc.regretMany({ hashes: [hash], seeds: 2, seedStart: 0, hintFor: () => 'h', player: plain, concurrency: 1 });
    expect(rt.log.filter((e) => e.cmd !== 'load').every((e) => e.background === undefined)).toBe(true);
    expect(rt.log.filter((e) => e.cmd === 'reset')).toHaveLength(4);
  });
});

describe('JSONL lines (one zod schema)', () => {
  it('says why a line cannot be used', () => {
    expect(parseEpisodeLine({ format: 'x' })).toMatch(/not a spade-workbench episode/);
    expect(parseEpisodeLine({ format: 'spade-workbench.episode', steps: [] })).toMatch(/neither envHash nor source/);
    expect(parseEpisodeLine({ format: 'spade-workbench.episode', source: 'x', steps: [{ kind: 'jump' }] })).toMatch(/steps\.0\.kind: kind must be reset or step/);
    const ok = parseEpisodeLine({ format: 'spade-workbench.episode', source: 'x', steps: [{ kind: 'reset', observation: 'o' }, { kind: 'step', action: 'a', reward: 1, terminated: true, spade: { observation: 'o', reward: 'NaN', terminated: true, truncated: false, info: {} } }] });
    expect(typeof ok === 'object' && ok.steps[1]!.spade?.reward).toBe('NaN');
  });
});
