import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Services } from '../../../core/services/services';
import { ingest } from '../../../core/memory/repository';
import { sha256 } from '../../../core/memory/parse';
import { firstPrompt, injectHint } from '../../../core/episodes/hint';
import { tempDir } from '../../helpers/tmp';
import { addSeedGame, addSource, CLASS_LEAK, COUNTER_SOURCE, GRID, LEAK, UNWINNABLE } from './fixtures';

const tmp = tempDir('spade-episodes-');
let s: Services;
let grid: string;
let leak: string;
let unwinnable: string;

beforeAll(() => {
  s = new Services({ dataDir: tmp.dir, shell: 'in-process' });
  grid = addSeedGame(s.db, GRID);
  leak = addSeedGame(s.db, LEAK);
  unwinnable = addSeedGame(s.db, UNWINNABLE);
});
afterAll(async () => {
  await s.close();
  tmp.cleanup();
});

describe('episodes on the real Pyodide runtime', () => {
  it('plays with solution(), records every step with state, and replays without divergence', async () => {
    const ep = s.episodes;
    const opened = await ep.open({ hash: grid, seed: 3, hint: false, label: 't', runtime: 'pyodide' });
    expect(opened.steps).toHaveLength(1);
    expect(opened.steps[0]!.observation).toContain('Walk from S to G');
    const id = opened.episode.id;
    const ran = await ep.run(id, { kind: 'solution' }, { kind: 'done' }, 100);
    expect(ran.stoppedBecause).toBe('terminated');
    const last = ran.steps.at(-1)!;
    expect(last.reward).toBe(1);
    expect(last.terminated).toBe(true);
    expect(ran.episode.totalReturn).toBe(1);
    const d = ep.inspect(id, 1);
    expect(d.changes.some((c) => c.path.startsWith('pos'))).toBe(true);
    expect(d.changes.map((c) => c.path)).toContain('turn');
    expect(d.observationDiff.some((o) => o.op !== '=')).toBe(true);
    const rep = await ep.replay(id);
    expect(rep.divergence).toBeNull();
    expect(rep.compared).toBe(ran.steps.length);
  });

  it('scrubs back to an earlier step and forks when play continues from there', async () => {
    const ep = s.episodes;
    const { episode } = await ep.open({ hash: grid, seed: 5, hint: false, label: '', runtime: 'pyodide' });
    await ep.run(episode.id, { kind: 'script', actions: ['\\boxed{up}', '\\boxed{left}', '\\boxed{down}', '\\boxed{right}'], extract: true }, { kind: 'steps', count: 4 }, 10);
    const sc = await ep.scrub(episode.id, 2);
    expect(sc.live).toBe(true);
    expect(sc.detail.step.idx).toBe(2);
    const after = await ep.act(episode.id, '\\boxed{down}', false);
    expect(after.forkedFrom).toBe(episode.id);
    expect(after.episode.id).not.toBe(episode.id);
    expect(after.steps.map((x) => x.idx)).toEqual([3]);
    expect(after.detail.step.idx).toBe(3);
    expect(ep.get(after.episode.id).steps).toHaveLength(4);
    // the fork's new step must equal what the game says from step 2's state, which a fresh replay confirms
    const rep = await ep.replay(after.episode.id);
    expect(rep.divergence).toBeNull();
  });

  it('shows a state leak across reset in the diff against the first reset', async () => {
    const ep = s.episodes;
    const { episode } = await ep.open({ hash: leak, seed: 1, hint: false, label: '', runtime: 'pyodide' });
    await ep.act(episode.id, '\\boxed{1}', false);
    const again = await ep.resetAgain(episode.id, 1);
    const idx = again.steps.at(-1)!.idx;
    const d = ep.inspect(episode.id, idx);
    expect(d.step.kind).toBe('reset');
    const paths = (d.changesFromSameSeedReset ?? []).map((c) => c.path);
    expect(paths).toContain('asked');
    expect(paths.some((p) => p.startsWith('problem'))).toBe(true);
    expect(d.comparedReset).toEqual({ episodeId: episode.id, idx: 0, seed: 1, sameEpisode: true });
    // a correct game would deal the same first observation for the same seed
    const all = ep.get(episode.id).steps;
    expect(all[idx]!.observation).not.toBe(all[0]!.observation);
    expect(again.detail.changesFromSameSeedReset?.length).toBeGreaterThan(0);
  });

  it('compares a reset only with a reset of the same seed: never blames fields that differ because the seeds differ', async () => {
    const ep = s.episodes;
    const { episode } = await ep.open({ hash: grid, seed: 3, hint: false, label: '', runtime: 'pyodide' });
    await ep.act(episode.id, '\\boxed{up}', false);
    const other = await ep.resetAgain(episode.id, 5);
    expect(other.detail.comparedReset).toBeNull();
    expect(other.detail.changesFromSameSeedReset).toBeNull();
    await ep.act(episode.id, '\\boxed{up}', false);
    // the same seed again: compared with the latest reset(seed=5), not with step 0's reset(seed=3)
    const same = await ep.resetAgain(episode.id, 5);
    expect(same.detail.comparedReset).toEqual({ episodeId: episode.id, idx: other.detail.step.idx, seed: 5, sameEpisode: true });
    expect(same.detail.changesFromSameSeedReset).toEqual([]);
  });

  it('shows class attributes and module globals in the state, and a class-level leak against a fresh instance', async () => {
    const ep = s.episodes;
    const classLeak = addSource(s.db, CLASS_LEAK, 'digit_recall.py');
    const ref = await ep.open({ hash: classLeak, seed: 5, hint: false, label: 'reference', runtime: 'pyodide' });
    const refState = ep.inspect(ref.episode.id, 0).state as { classFields?: [string, unknown][]; moduleGlobals?: [string, unknown][] };
    expect(refState.classFields?.map(([k]) => k)).toEqual(['history']);
    expect(refState.moduleGlobals?.map(([k]) => k)).toEqual(['ROUNDS_SEEN']);
    const played = await ep.open({ hash: classLeak, seed: 3, hint: false, label: '', runtime: 'pyodide', resetReference: { episodeId: ref.episode.id, idx: 0 } });
    await ep.act(played.episode.id, '\\boxed{1}', false);
    const again = await ep.resetAgain(played.episode.id, 5);
    expect(again.detail.comparedReset).toEqual({ episodeId: ref.episode.id, idx: 0, seed: 5, sameEpisode: false });
    const paths = (again.detail.changesFromSameSeedReset ?? []).map((c) => c.path);
    // only the shared state differs from a fresh instance's reset with the same seed
    expect(paths.filter((p) => !p.includes('['))).toEqual(['DigitRecallEnv.history', 'globals.ROUNDS_SEEN']);
  });

  it('runs until a state expression holds and stops exactly there', async () => {
    const ep = s.episodes;
    const hash = sha256(COUNTER_SOURCE);
    ingest(s.db, { source: COUNTER_SOURCE, path: 'counter.py' });
    const { episode } = await ep.open({ hash, seed: 0, hint: false, label: '', maxTurns: 10_000, runtime: 'pyodide' });
    const start = Number(/count=(\d+)/.exec((await ep.get(episode.id)).steps[0]!.observation!)![1]);
    const r = await ep.run(episode.id, { kind: 'random', lo: 1, hi: 100 }, { kind: 'expr', expr: `count >= ${start + 40}` }, 1000);
    expect(r.stoppedBecause).toBe(`state: count >= ${start + 40}`);
    expect(r.steps).toHaveLength(41);
    // the live session stands at the stopping step: one more step continues from there
    const next = await ep.act(episode.id, 'x', false);
    expect(next.steps.at(-1)!.observation).toBe(`count=${start + 41}`);
    await expect(ep.run(episode.id, { kind: 'random', lo: 1, hi: 100 }, { kind: 'expr', expr: 'count >>> 3' }, 10)).rejects.toThrow(/Cannot read the value/);
  });

  it('imports a trajectory without a seed, finds the seed, and reports a planted divergence at the right step', async () => {
    const ep = s.episodes;
    const { episode } = await ep.open({ hash: grid, seed: 11, hint: true, label: '', runtime: 'pyodide' });
    const played = await ep.run(episode.id, { kind: 'script', actions: ['\\boxed{up}', '\\boxed{left}', '\\boxed{down}', '\\boxed{right}', '\\boxed{up}'], extract: false }, { kind: 'steps', count: 5 }, 10);
    const hint = played.episode.hintText!;
    const steps = played.steps;
    expect(steps[0]!.agentObservation).toBe(injectHint(steps[0]!.observation!, hint));
    const messages: { role: string; content: string }[] = [{ role: 'system', content: 'sys' }, { role: 'user', content: firstPrompt(steps[0]!.agentObservation!) }];
    for (const st of steps.slice(1)) {
      messages.push({ role: 'assistant', content: `<think>I should go ${st.action}</think>My move is ${st.action}` });
      messages.push({ role: 'user', content: st.observation! });
    }
    // plant: the recorded answer to the 3rd action differs from what the game says
    messages[2 + 2 * 2 + 1]!.content = 'You moved sideways.';
    const text = messages.map((m) => JSON.stringify(m)).join('\n');
    const out = await ep.importTrajectories({ text, fileName: `${GRID}_rollout.jsonl`, seedSearchLimit: 100 });
    expect(out.results).toHaveLength(1);
    const r = out.results[0]!;
    expect(r.boundBy).toBe('file');
    expect(r.seed).toBe(11);
    expect(r.seedFrom).toBe('search');
    expect(r.report.divergence?.idx).toBe(3);
    expect(r.report.divergence?.fields).toEqual(['observation']);
    expect(r.report.divergence?.recorded.observation).toBe('You moved sideways.');
    expect(r.report.divergence?.stateChanges.length).toBeGreaterThan(0);
    const imported = ep.get(r.episodeId);
    expect(imported.episode.hintEnabled).toBe(true);
    expect(imported.episode.hintText).toBe(hint);
    expect(imported.episode.divergenceStep).toBe(3);
  });

  it('exports JSONL that re-imports into an identical, replayable episode', async () => {
    const ep = s.episodes;
    const { episode } = await ep.open({ hash: unwinnable, seed: 2, hint: false, label: 'x', runtime: 'pyodide' });
    await ep.run(episode.id, { kind: 'solution' }, { kind: 'done' }, 10);
    const ex = ep.exportJsonl([episode.id]);
    expect(ex.count).toBe(1);
    const back = ep.importJsonl(ex.text + 'not json\n{"format":"other"}\n');
    expect(back.ids).toHaveLength(1);
    expect(back.skipped.map((x) => x.line)).toEqual([2, 3]);
    const a = ep.get(episode.id).steps;
    const b = ep.get(back.ids[0]!).steps;
    expect(b).toEqual(a);
    expect((await ep.replay(back.ids[0]!)).divergence).toBeNull();
    // the unwinnable game: its own solution() never earns a reward
    expect(a.some((x) => (x.reward ?? 0) > 0)).toBe(false);
  });

  it('regret: solution() on the hinted arm against random guesses', async () => {
    const ep = s.episodes;
    const r = await ep.regret({ hash: grid, seeds: 3, seedStart: 0, policy: { kind: 'random', lo: 1, hi: 100 }, hintPolicy: { kind: 'solution' }, runtime: 'pyodide' });
    expect(r.withHint.returns).toEqual([1, 1, 1]);
    expect(r.withoutHint.returns).toEqual([0, 0, 0]);
    expect(r.regret).toBe(1);
    expect(r.withHint.solveRate).toBe(1);
    expect(r.hintText).toBeTruthy();
    expect(r.cancelled).toBe(false);
  });

  it('regret with a runId reports progress per episode and stops on cancel with paired seeds', async () => {
    const ep = s.episodes;
    const seen: { done: number; total: number; etaSec: number | null }[] = [];
    const off = s.events.subscribe((name, payload) => {
      if (name !== 'episodes.regretProgress') return;
      const p = payload as { runId: string; done: number; total: number; etaSec: number | null };
      if (p.runId !== 'run-a') return;
      seen.push(p);
      // Cancel while the with-hint episode of the third seed is the last one done.
      if (p.done === 5) expect(ep.regretCancel('run-a')).toBe(true);
    });
    try {
      const running = ep.regret({ hash: grid, seeds: 40, seedStart: 10, policy: { kind: 'random', lo: 1, hi: 100 }, hintPolicy: { kind: 'solution' }, runtime: 'pyodide', runId: 'run-a' });
      // one run per id at a time
      await expect(ep.regret({ hash: grid, seeds: 1, seedStart: 0, policy: { kind: 'solution' }, runId: 'run-a' })).rejects.toMatchObject({ code: 'conflict' });
      const r = await running;
      expect(r.cancelled).toBe(true);
      // no episode starts after the cancel; the arms compare only seeds both finished (the
      // hinted episode of seed 12 is kept for a resume, outside the summary)
      expect(r.withHint.returns).toEqual([1, 1]);
      expect(r.withoutHint.returns).toEqual([0, 0]);
      expect(r.regret).toBe(1);
      expect(seen.map((p) => p.done)).toEqual([1, 2, 3, 4, 5]);
      expect(seen.every((p) => p.total === 80)).toBe(true);
      expect(seen.every((p) => p.etaSec !== null && p.etaSec >= 0)).toBe(true);
      const labels = [...r.withHint.episodeIds, ...r.withoutHint.episodeIds].map((id) => ep.get(id).episode.label);
      expect(labels.filter((l) => l.endsWith('seed 11'))).toHaveLength(2);
      expect(labels.filter((l) => l.endsWith('seed 12'))).toHaveLength(0);
      expect(ep.regretCancel('run-a')).toBe(false); // finished runs are forgotten
    } finally {
      off();
    }
  });
});

describe('episodes survive a restart', () => {
  it('reopens the recording and continues it in a fresh session', async () => {
    const dir = tempDir('spade-episodes-restart-');
    try {
      let a = new Services({ dataDir: dir.dir, shell: 'in-process' });
      const h = addSeedGame(a.db, GRID);
      const { episode } = await a.episodes.open({ hash: h, seed: 4, hint: false, label: 'keep', runtime: 'pyodide' });
      await a.episodes.act(episode.id, '\\boxed{up}', false);
      const before = a.episodes.get(episode.id).steps;
      await a.close();
      a = new Services({ dataDir: dir.dir, shell: 'in-process' });
      const got = a.episodes.get(episode.id);
      expect(got.episode.live).toBe(false);
      expect(got.steps).toEqual(before);
      const cont = await a.episodes.act(episode.id, '\\boxed{down}', false);
      expect(cont.steps.map((x) => x.idx)).toEqual([2]);
      expect(a.episodes.get(cont.episode.id).steps).toHaveLength(3);
      expect(cont.episode.live).toBe(true);
      await a.close();
    } finally {
      dir.cleanup();
    }
  });
});

describe('a session the runtime dropped', () => {
  it('is re-created from the recording on the next step', async () => {
    const ep = s.episodes;
    const { episode } = await ep.open({ hash: grid, seed: 9, hint: false, label: '', runtime: 'pyodide' });
    await ep.act(episode.id, '\\boxed{up}', false);
    // what the runtime's idle sweeper does: close every session it holds
    const sessions = (s.runtime as unknown as { sessions: Map<string, unknown> }).sessions;
    for (const sid of [...sessions.keys()]) await s.runtime.close(sid);
    const r = await ep.act(episode.id, '\\boxed{down}', false);
    expect(r.steps.map((x) => x.idx)).toEqual([2]);
    expect((await ep.replay(episode.id)).divergence).toBeNull();
  });
});
