// Design rounds through the API (the dispatcher, as every transport calls it): a scripted designer
// and agent (the stand-in OpenAI-compatible server), the app's real audit, real play (a run record
// per game), a real SQLite file that a second Services reopens as a restarted workbench would.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Backend, EventPayload } from '../../../core/api';
import { createHandlers } from '../../../core/handlers';
import { createDispatcher } from '../../../core/server/dispatcher';
import { createInProcessBackend } from '../../../core/server/inProcess';
import { Services } from '../../../core/services/services';
import { ingest } from '../../../core/memory/repository';
import { tempDir } from '../../helpers/tmp';
import { startStandIn, type StandIn } from '../../helpers/standInOpenAi';
import { luckySevenGame } from '../../helpers/designGames';

// The secret is 7 in every episode; the agent (stand-in) says 7 only when it sees the hint.
const GAME = luckySevenGame;
const SEED = (n: number) => `class Seed${n}Env:\n    def reset(self, seed=None):\n        return "seed ${n}", {}\n    def step(self, action):\n        return "done", 0.0, True, False, {}\n`;

type Msg = { role: string; content: string };
const msgs = (b: Record<string, unknown>) => b.messages as Msg[];

const tmp = tempDir('spade-design-svc-');
let services: Services;
let api: Backend;
let server: StandIn;
let designs = 0;
/** When set, the designer's answers wait this long (a round to cancel while it waits). */
let slow = 0;
const ended = new Map<string, string>();
const waiters = new Map<string, () => void>();
const progress: EventPayload<'design.progress'>[] = [];

function open(): void {
  services = new Services({ dataDir: tmp.dir, shell: 'in-process' });
  api = createInProcessBackend(createDispatcher(createHandlers(services)), services.events);
  api.on('design.changed', (e) => {
    if (e.status === 'running') return;
    ended.set(e.roundId, e.status);
    waiters.get(e.roundId)?.();
  });
  api.on('design.progress', (e) => progress.push(e));
}
async function close(): Promise<void> {
  api.close();
  await services.close();
}
const end = (id: string) => (ended.has(id) ? Promise.resolve() : new Promise<void>((r) => waiters.set(id, r)));

beforeAll(async () => {
  server = await startStandIn((b) => {
    const m = msgs(b);
    // The hint for SevenEnv gives its answer away (hint-leak fails); LuckyEnv's does not.
    if (m[0]!.role === 'system' && m[0]!.content.includes('short hint')) return { content: m.some((x) => x.content.includes('class SevenEnv')) ? 'Just answer 7.' : 'The number is lucky; answer as \\boxed{n}.' };
    if (String(b.model) === 'designer') {
      designs++;
      if (slow) return { content: 'late', delayMs: slow };
      // Game 1: no code at first, fixed on the second attempt. Game 2: right at once.
      if (designs === 1) return { content: 'I forgot the code.' };
      return { content: `\`\`\`python\n${GAME(designs === 2 ? 'LuckyEnv' : 'SevenEnv')}\`\`\`` };
    }
    const first = m.find((x) => x.role === 'user')!.content;
    return { content: first.includes('HINT: ') ? '\\boxed{7}' : '\\boxed{3}' };
  });
  open();
  // Audits and play in native CPython (in its sandbox), as the CLI runs them: Pyodide's start-up would be most of this file's time.
  await api.call('settings.update', { auditRuntime: 'cpython', defaultRuntime: 'cpython' });
  // Memory: three Logical Deduction games in SPADE's positive band, one far too easy.
  const db = services.db;
  ingest(db, { source: SEED(1), path: 'seed1.py', name: 'Seed1Env', skill: 'Logical Deduction', stats: { winRate: 0.5, regret: 0.4, rHint: 0.9, rNoHint: 0.5 } });
  ingest(db, { source: SEED(2), path: 'seed2.py', name: 'Seed2Env', skill: 'Logical Deduction', stats: { winRate: 0.3, regret: 0.3, rHint: 0.6, rNoHint: 0.3 } });
  ingest(db, { source: SEED(3), path: 'seed3.py', name: 'Seed3Env', skill: 'Logical Deduction', stats: { winRate: 0.6, regret: 0.2, rHint: 0.8, rNoHint: 0.6 } });
  ingest(db, { source: SEED(4), path: 'seed4.py', name: 'Seed4Env', skill: 'Logical Deduction', stats: { winRate: 0.97, regret: 0.0, rHint: 1, rNoHint: 1 } });
});
afterAll(async () => {
  await close();
  await server.close();
  tmp.cleanup();
});
afterEach(() => {
  slow = 0;
});

const endpoint = (model: string) => ({ baseUrl: server.url, model, retries: 0, concurrency: 1, turnTimeoutSec: 60 });

describe('design rounds through the API', () => {
  it('previews the exact first prompt, runs a round in the background with progress, plays accepted games as run records, and reopens it after a restart', async () => {
    const form = { skills: ['Logical Deduction' as const], pins: [3], bans: [1], seed: 4, maxTurns: 4 };
    const preview = await api.call('design.preview', form);
    // Pinned 3 is offered first, banned 1 never; 2 is the only other in the band; 4 is the negative, by name.
    expect(preview.positives.map((p) => p.envId)).toEqual([3, 2]);
    expect(preview.negatives.map((p) => p.envId)).toEqual([4]);
    expect(preview.prompt).toContain('class Seed3Env');
    expect(preview.prompt).not.toContain('class Seed1Env');
    expect(preview.memory).toBe(4);

    const before = server.requests.length;
    const { roundId, seq } = await api.call('design.start', { ...form, count: 2, attempts: 2, designer: endpoint('designer'), agent: endpoint('agent'), playSeeds: 2, estimator: 'paired' });
    expect(seq).toBe(1);
    // The call answers at once; the round is live until it ends.
    expect((await api.call('design.list', {})).find((r) => r.id === roundId)?.status).toBe('running');
    await end(roundId);
    expect(ended.get(roundId)).toBe('done');

    // The first request the designer got is the preview, word for word.
    const firstDesign = server.requests.slice(before).find((b) => String(b.model) === 'designer')!;
    expect(msgs(firstDesign)).toEqual([{ role: 'user', content: preview.prompt }]);

    const mine = progress.filter((p) => p.roundId === roundId);
    expect(new Set(mine.map((p) => p.stage))).toEqual(new Set(['designing', 'checking', 'hinting', 'playing']));
    expect(mine.some((p) => p.game === 2 && p.games === 2)).toBe(true);
    expect(mine.some((p) => p.game === 1 && p.attempt === 2 && p.of === 2)).toBe(true);

    const round = await api.call('design.get', { id: roundId });
    expect(round.live).toBe(false);
    expect(round.games.map((g) => [g.accepted, g.attempts.length])).toEqual([
      [true, 2],
      [true, 1],
    ]);
    // SPADE mode by default (issue 44): validate_game's refusal, and the round says which preset it followed.
    expect(round.games[0]!.attempts[0]!.rejected_because).toMatch(/^validate_game: Game validation failed: /);
    expect(round.games[0]!.attempts[0]!.acceptance).toMatchObject({ gate: 'spade', accepted: false, kind: 'validate_game' });
    expect(round.games[0]!.attempts[1]!.acceptance).toMatchObject({ gate: 'spade', accepted: true, incomplete: null });
    expect(round.config).toMatchObject({ acceptance: { gate: 'spade', resetGate: false, envValidator: false }, extra: { preset: 'spade-games' }, feedback: 'spade' });
    expect(round.games[0]!.parents).toEqual([3, 2]);
    // The hint is checked for leaks once it exists (the program's audit ran before it was written).
    expect(round.games.map((g) => g.hint_leak?.status)).toEqual(['pass', 'fail']);
    expect(round.games[1]!.hint_leak!.message).toContain("'7'");
    for (const g of round.games) {
      // Hinted play always wins, unhinted never: regret 1, win rate 0 (unsolvable for this agent).
      expect([g.regret, g.win_rate, g.class]).toEqual([1, 0, 'unsolvable']);
      expect(g.run_id).toBe(`${roundId}-g${g.idx + 1}`);
    }

    // Each game's play is a run record (Runs page), grouped by the round.
    const runs = await api.call('runs.list', { selection: 'design round 1' });
    expect(runs.rows.map((r) => r.id).sort()).toEqual([`${roundId}-g1`, `${roundId}-g2`]);
    const run = await api.call('runs.get', { id: `${roundId}-g1` });
    expect(run.run.model).toBe('agent');
    expect(run.envs[0]).toMatchObject({ envHash: round.games[0]!.env_hash, regret: 1, winRate: 0 });
    expect(round.games.map((g) => g.plays_on)).toEqual(['local', 'local']);

    // The accepted game is in the library with its parents.
    const env = await api.call('memory.get', { id: round.games[0]!.env_id! });
    expect(env.name).toBe('LuckyEnv');
    expect(JSON.stringify(env)).toContain(roundId);

    // Seeds chosen for the agent: with its measured numbers the designed games (win rate 0 for it)
    // are candidates for "avoid"; with the recorded numbers alone (they have none) they are not.
    const forAgent = await api.call('design.preview', { skills: ['Logical Deduction'], bans: [4], seed: 4, seedsModel: 'agent' });
    expect(round.games.map((g) => g.env_id)).toContain(forAgent.negatives[0]?.envId);
    expect((await api.call('design.preview', { skills: ['Logical Deduction'], bans: [4], seed: 4 })).negatives).toEqual([]);

    // A restarted workbench lists and reopens the round as it was.
    await close();
    open();
    const listed = (await api.call('design.list', {})).find((r) => r.id === roundId)!;
    expect(listed).toMatchObject({ status: 'done', games: 2, accepted: 2, attempts: 3, live: false });
    const again = await api.call('design.get', { id: roundId });
    expect(again.games.map((g) => g.regret)).toEqual([1, 1]);
    expect(again.games[0]!.attempts[1]!.prompt).toBe(round.games[0]!.attempts[1]!.prompt);
  });

  it('cancels a round while its designer is answering; what was stored stays, and the round says cancelled', async () => {
    slow = 60_000;
    // The first progress event comes before design.start answers (the round starts at once), so listen first.
    const designing = new Promise<string>((r) => {
      const off = api.on('design.progress', (p) => {
        if (p.stage === 'designing') (off(), r(p.roundId));
      });
    });
    const { roundId } = await api.call('design.start', { skills: ['Optimization'], count: 3, attempts: 3, designer: endpoint('designer'), agent: null });
    expect(await designing).toBe(roundId);
    expect((await api.call('design.get', { id: roundId })).progress).toMatchObject({ game: 1, games: 3, attempt: 1, of: 3, stage: 'designing' });
    expect(await api.call('design.cancel', { id: roundId })).toEqual({ cancelled: true });
    await end(roundId);
    const r = await api.call('design.get', { id: roundId });
    expect(r.status).toBe('cancelled');
    expect(r.games).toHaveLength(1);
    expect(r.games[0]!.attempts).toHaveLength(1);
    expect(r.games[0]!.attempts[0]!.error).not.toBeNull();
    expect(await api.call('design.cancel', { id: roundId })).toEqual({ cancelled: false });
  });

  it('refuses a round on a cluster whose agent only this machine can reach, before anything is stored', async () => {
    const rounds = (await api.call('design.list', {})).length;
    const ray = { kind: 'ray' as const, address: '127.0.0.1:8265' };
    // The nodes call the agent themselves: the embedded model and an endpoint through a job's SSH connection are refused.
    await expect(api.call('design.start', { skills: ['Optimization'], count: 1, designer: endpoint('designer'), agent: { ...endpoint('agent'), baseUrl: 'local' }, checksOn: ray })).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringContaining('embedded model plays only on this machine') });
    await expect(api.call('design.start', { skills: ['Optimization'], count: 1, designer: endpoint('designer'), agent: { ...endpoint('agent'), via: { jobId: 'job1' } }, checksOn: ray })).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringContaining("through a job's SSH connection") });
    expect(await api.call('design.list', {})).toHaveLength(rounds);
  });

  it("previews a variants round: the parent is the only seed and the researcher's instruction comes last", async () => {
    const p = await api.call('design.preview', { skills: ['Logical Deduction'], parentEnvId: 1, instruction: 'Make it harder: more turns.', seed: 1 });
    expect(p.positives.map((x) => x.envId)).toEqual([1]);
    expect(p.negatives).toEqual([]);
    expect(p.memory).toBe(1);
    expect(p.prompt).toMatch(/class Seed1Env[\s\S]*\n\nInstruction from the researcher: Make it harder: more turns\.$/);
    await expect(api.call('design.preview', { skills: ['Logical Deduction'], parentEnvId: 99_999 })).rejects.toMatchObject({ code: 'not_found' });
    await expect(api.call('design.preview', { skills: ['Logical Deduction'], template: 'A {{game}} game' })).rejects.toMatchObject({ code: 'invalid_input' });
  });
});
