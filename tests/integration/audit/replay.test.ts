import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandlers } from '../../../core/handlers';
import { ingest } from '../../../core/memory/repository';
import { sha256 } from '../../../core/memory/parse';
import { Services } from '../../../core/services/services';
import { tempDir } from '../../helpers/tmp';

// "Replay" of a check's evidence through the API, on real Pyodide (where the app audits) and a
// real SQLite file: the episode it opens is the one the evidence names, played where and how the
// audit played it, and no runtime session outlives it.
const root = join(__dirname, '..', '..', '..');
const LEAKY = readFileSync(join(root, 'resources', 'seed-pack', 'games', 'game_00000_013_mathematical_reasoning.py'), 'utf8');
let s: Services;
let h: ReturnType<typeof createHandlers>;
const tmp = tempDir();

beforeAll(() => {
  s = new Services({ dataDir: tmp.dir, shell: 'in-process' });
  h = createHandlers(s);
  ingest(s.db, { source: LEAKY, path: 'game_00000_013_mathematical_reasoning.py', fileStem: 'game_00000_013_mathematical_reasoning' });
});
afterAll(async () => {
  await s.close();
  tmp.cleanup();
});

const call = <N extends keyof typeof h>(n: N, input: Parameters<(typeof h)[N]>[0]) => (h[n] as (i: unknown) => unknown)(input) as ReturnType<(typeof h)[N]>;

interface Field {
  t?: string;
  v?: unknown;
  items?: Field[];
}

/** A state-tree value (harness describe_fields) as plain JSON: lists and tuples as arrays. */
function plain(f: Field | undefined): unknown {
  if (!f) return undefined;
  if (Array.isArray(f.items)) return f.items.map(plain);
  return f.v;
}

const NEVER_ENDS = `class NeverEndsEnv:
    def __init__(self, max_turns=3):
        self.max_turns = max_turns

    def reset(self, seed=None):
        return "go", {}

    def step(self, action):
        return "again", 0.0, False, False, {}

    def solution(self):
        return "1"
`;

describe("replaying a check's evidence", () => {
  it('opens the episode the reset-leak evidence names, in the runtime and mode the audit used, and closes what it does not show', async () => {
    const hash = sha256(LEAKY);
    expect(s.settings.get().auditRuntime).toBe('pyodide');
    const audit = await call('audit.run', { hash, checks: ['reset-leak'] });
    expect(audit.runtime).toBe('pyodide');
    const leak = audit.checks.find((c) => c.id === 'reset-leak')!;
    expect(leak.status).toBe('fail');
    const ev = leak.evidence;
    // The evidence says the whole episode: reset(seed), the actions, then reset(resetSeed) on the same instance.
    expect(ev.seed).toBe(3);
    expect(ev.resetSeed).toBe(5);
    expect(ev.firstSeed).toBeUndefined();
    expect(ev.runtime).toBe('pyodide');
    expect(ev.mode).toBe('deterministic');
    expect(ev.maxTurns).toBe(s.settings.get().maxTurns);
    const actions = ev.actions as string[];
    expect(actions.length).toBeGreaterThan(0);

    const before = s.runtime.status().sessions;
    const r = await call('audit.replay', { hash, checkId: 'reset-leak' });
    expect(r).toMatchObject({ seed: 3, resetSeed: 5, actions: actions.length, runtime: 'pyodide', mode: 'deterministic' });
    const ep = await call('episodes.get', { id: r.episodeId });
    expect(ep.episode.seed).toBe(ev.seed);
    expect(ep.episode.runtime).toBe('pyodide');
    expect(ep.episode.meta.mode).toBe('deterministic');
    // Exactly the evidence: reset(3), its actions, reset(5); opened at that last reset.
    expect(ep.steps.map((x) => (x.kind === 'reset' ? `reset(${x.seed})` : x.action))).toEqual(['reset(3)', ...actions, 'reset(5)']);
    expect(r.step).toBe(ep.steps.length - 1);
    // The reference (a fresh instance's reset(5)) is recorded but holds no session: only the shown episode is live.
    const ref = await call('episodes.get', { id: r.referenceId! });
    expect(ref.episode.live).toBe(false);
    expect(ref.steps.map((x) => x.seed)).toEqual([5]);
    expect(ep.episode.live).toBe(true);
    expect(s.runtime.status().sessions).toBe(before + 1);

    // The leak shows where the check saw it, with the very values the evidence reports.
    const detail = await call('episodes.inspect', { id: r.episodeId, idx: r.step });
    expect(detail.comparedReset).toMatchObject({ episodeId: r.referenceId, seed: 5, sameEpisode: false });
    const changed = (detail.changesFromSameSeedReset ?? []).map((c) => c.path);
    expect(changed.some((p) => p.startsWith('asked'))).toBe(true);
    // Made and seeded as the check made it (no load validation, random seeded at each reset), the
    // replayed instance holds exactly what the evidence says: after the leak, and a fresh one's.
    const asked = async (id: number, idx: number) => plain(((await call('episodes.inspect', { id, idx })).state as { fields: [string, Field][] }).fields.find(([k]) => k === 'asked')?.[1]);
    expect(JSON.stringify(await asked(r.episodeId, r.step))).toBe((ev.observed as Record<string, string>)['self.asked']!.replace(/ /g, ''));
    expect(JSON.stringify(await asked(r.referenceId!, 0))).toBe((ev.expected as Record<string, string>)['self.asked']!.replace(/ /g, ''));

    await call('episodes.close', { id: r.episodeId });
    expect(s.runtime.status().sessions).toBe(before);
  }, 600_000);
});

describe('max-turns evidence', () => {
  it('lists every action the never-winning policy played, so its replay plays them all', async () => {
    const hash = sha256(NEVER_ENDS);
    ingest(s.db, { source: NEVER_ENDS, path: 'never_ends.py' });
    const audit = await call('audit.run', { hash, checks: ['max-turns'] });
    const c = audit.checks.find((x) => x.id === 'max-turns')!;
    expect(c.status).toBe('fail');
    expect(c.message).toContain('never reaches truncation: 8 turns with max_turns=3');
    expect(c.evidence.actions).toEqual(Array(8).fill('\\boxed{0}'));
    expect(c.evidence).toMatchObject({ seed: 11, runtime: 'pyodide', mode: 'spade' });
    const r = await call('audit.replay', { hash, checkId: 'max-turns' });
    const ep = await call('episodes.get', { id: r.episodeId });
    expect(ep.steps.map((x) => x.action)).toEqual([null, ...Array(8).fill('\\boxed{0}')]);
    expect(r.referenceId).toBeNull();
    await call('episodes.close', { id: r.episodeId });
    // Bad input gets a clear error: a check the audit did not run.
    await expect(call('audit.replay', { hash, checkId: 'reset-leak' })).rejects.toThrow(/has no check reset-leak/);
  }, 600_000);
});
