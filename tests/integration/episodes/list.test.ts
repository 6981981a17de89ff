import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../../core/memory/db';
import { EpisodeStore, type StepRecord } from '../../../core/episodes/episodeStore';
import { tempDir } from '../../helpers/tmp';

// The recorded list's filters over 351 episodes in a real SQLite file: environment, policy,
// hint, SPADE's outcome and the days they were recorded, alone and together.
type Outcome = 'won' | 'lost' | 'truncated' | 'unfinished';
const ENVS = ['GuessEnv', 'GridEnv', 'MentalArithmeticEnv'];
const POLICIES = [{ kind: 'interactive' }, { kind: 'script', count: 3 }, { kind: 'solution' }, { kind: 'llm', model: 'm' }];
const OUTCOMES: Outcome[] = ['won', 'lost', 'truncated', 'unfinished'];

function lastStep(o: Outcome): StepRecord {
  const terminated = o === 'won' || o === 'lost';
  const truncated = o === 'truncated';
  const reward = o === 'won' ? 1 : 0;
  const spade = { observation: 'x', reward, terminated, truncated, info: {} };
  return { idx: 1, kind: 'step', action: '\\boxed{1}', rawAction: null, seed: null, observation: 'x', reward, terminated, truncated, info: {}, error: null, state: null, types: null, spade };
}

const reset: StepRecord = { idx: 0, kind: 'reset', action: null, rawAction: null, seed: 0, observation: 'start', reward: null, terminated: false, truncated: false, info: {}, error: null, state: null, types: null };

describe('filtering recorded episodes', () => {
  it('narrows 351 episodes by environment, policy, hint, outcome and date, together', () => {
    const tmp = tempDir();
    const db = openDatabase(`${tmp.dir}/w.sqlite`);
    try {
      const store = new EpisodeStore(db);
      const made: { env: string; policy: string; hint: boolean; outcome: Outcome; day: string }[] = [];
      for (let i = 0; i < 351; i++) {
        const e = { env: ENVS[i % 3]!, policy: POLICIES[i % 4]!, hint: i % 2 === 0, outcome: OUTCOMES[Math.floor(i / 5) % 4]!, day: `2026-11-${String(1 + (i % 30)).padStart(2, '0')}` };
        const id = store.create(
          { envHash: `${i % 3}`.repeat(64), envName: e.env, className: e.env, seed: i, hintEnabled: e.hint, hintText: e.hint ? 'h' : null, maxTurns: 30, runtime: 'pyodide', origin: 'played', policy: e.policy },
          `${e.day}T12:00:00.000Z`,
        );
        store.appendSteps(id, [reset, ...(e.outcome === 'unfinished' ? [] : [lastStep(e.outcome)])]);
        made.push({ ...e, policy: e.policy.kind });
      }
      const count = (pred: (m: (typeof made)[number]) => boolean) => made.filter(pred).length;
      const all = store.list({ limit: 1000, offset: 0 });
      expect(all.total).toBe(351);

      expect(store.list({ envName: 'GridEnv', limit: 1000, offset: 0 }).total).toBe(count((m) => m.env === 'GridEnv'));
      expect(store.list({ policy: 'llm', limit: 1000, offset: 0 }).total).toBe(count((m) => m.policy === 'llm'));
      expect(store.list({ hint: true, limit: 1000, offset: 0 }).total).toBe(count((m) => m.hint));
      expect(store.list({ hint: false, limit: 1000, offset: 0 }).total).toBe(count((m) => !m.hint));
      for (const o of OUTCOMES) expect(store.list({ outcome: o, limit: 1000, offset: 0 }).total).toBe(count((m) => m.outcome === o));
      // Both days count: the 10th through the 12th.
      expect(store.list({ since: '2026-11-10', until: '2026-11-12', limit: 1000, offset: 0 }).total).toBe(count((m) => m.day >= '2026-11-10' && m.day <= '2026-11-12'));

      const f = { envName: 'MentalArithmeticEnv', policy: 'script', hint: false, outcome: 'won' as const, since: '2026-11-05' };
      const want = made.filter((m) => m.env === f.envName && m.policy === f.policy && !m.hint && m.outcome === 'won' && m.day >= f.since);
      const got = store.list({ ...f, limit: 1000, offset: 0 });
      expect(want.length).toBeGreaterThan(0);
      expect(got.total).toBe(want.length);
      expect(got.rows.every((r) => r.envName === f.envName && r.policy.kind === 'script' && !r.hintEnabled && r.terminated && r.totalReturn > 0)).toBe(true);

      // Pages of the filtered list add up to it, newest first, none twice.
      const p1 = store.list({ hint: true, limit: 100, offset: 0 });
      const p2 = store.list({ hint: true, limit: 100, offset: 100 });
      const ids = [...p1.rows, ...p2.rows].map((r) => r.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBe(Math.min(200, p1.total));

      expect(store.facets()).toEqual({
        envNames: ENVS.slice()
          .sort()
          .map((value) => ({ value, count: count((m) => m.env === value) })),
        policies: expect.arrayContaining(POLICIES.map((p) => ({ value: p.kind, count: count((m) => m.policy === p.kind) }))),
      });
      // A day that is not one is refused, not read as something else.
      expect(() => store.list({ since: '2026-02-30', limit: 10, offset: 0 })).toThrow(/Not a date/);
    } finally {
      db.close();
      tmp.cleanup();
    }
  });
});
