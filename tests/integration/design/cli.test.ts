// `spade-workbench design` end to end: a scripted designer and agent (the stand-in server), the real
// audit (native CPython in bubblewrap), real play (Pyodide), a real SQLite library; the round's
// SPADE-layout output read back by the importer. Then one attempt by the real embedded model.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { main } from '../../../core/cli/main';
import type { CliIO } from '../../../core/cli/command';
import { openDataDir } from '../../../core/memory/cliDb';
import { roundView } from '../../../core/design/designStore';
import { LocalEngine } from '../../../core/models/localEngine';
import { tempDir } from '../../helpers/tmp';
import { startStandIn, type StandIn } from '../../helpers/standInOpenAi';
import { luckySevenGame } from '../../helpers/designGames';

const tmp = tempDir('spade-design-cli-');
afterAll(async () => {
  await LocalEngine.closeAll();
  tmp.cleanup();
});
let server: StandIn | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIO = { out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`) };
  const code = await main(['design', ...args], io);
  return { code, out, err };
}

const GAME = luckySevenGame;

type Msg = { role: string; content: string };
const msgs = (b: Record<string, unknown>) => b.messages as Msg[];

describe('spade-workbench design', () => {
  it('runs a round of two games, stores every attempt, prints the JSON, and writes SPADE layout the importer reads back', async () => {
    let designs = 0;
    server = await startStandIn((b) => {
      const m = msgs(b);
      if (m[0]!.role === 'system' && m[0]!.content.includes('short hint')) return { content: 'The number is lucky; answer as \\boxed{n}.' };
      if (String(b.model) === 'designer') {
        designs++;
        // Game 1: broken first, fixed on the second attempt. Game 2: right at once.
        if (designs === 1) return { content: 'I forgot the code.' };
        return { content: `\`\`\`python\n${GAME(designs === 2 ? 'LuckyEnv' : 'SevenEnv')}\`\`\`` };
      }
      const first = m.find((x) => x.role === 'user')!.content;
      return { content: first.includes('HINT: ') ? '\\boxed{7}' : '\\boxed{3}' };
    });
    const data = join(tmp.dir, 'data');
    const out = join(tmp.dir, 'out');
    const r = await run(['--skills', 'Logical Deduction', 'Optimization', '--count', '2', '--designer', server.url, '--designer-model', 'designer', '--agent', server.url, '--agent-model', 'agent', '--attempts', '2', '--estimator', 'paired', '--play-seeds', '2', '--max-turns', '4', '--seed', '5', '--out', out, '--data-dir', data, '--json']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as {
      round: string;
      status: string;
      games: { skill: string; accepted: boolean; env_id: number | null; parents: number[]; hint: string | null; regret: number | null; win_rate: number | null; spade_blend: { blend: number; plateau: number; regret_norm: number; plateau_term: number; regret_term: number; mean_reward: number; regret: number; masked: boolean; params: { plateauWeight: number } } | null; class: string | null; attempts: { prompt: string; answer: string; verdicts: { id: string; status: string }[]; rejected_because: string | null }[] }[];
    };
    expect(j.status).toBe('done');
    expect(j.games.map((g) => g.skill)).toEqual(['Logical Deduction', 'Optimization']);
    expect(j.games.map((g) => g.accepted)).toEqual([true, true]);
    expect(j.games[0]!.attempts).toHaveLength(2);
    // SPADE mode by default (issue 44): the rejection is validate_game's, in SPADE's words.
    expect(j.games[0]!.attempts[0]!.rejected_because).toMatch(/^validate_game: Game validation failed: /);
    const jj = JSON.parse(r.out) as { mode: string; acceptance: { gate: string; preset: string; recipe: string; reset_gate: boolean; env_validator: boolean }; games: { attempts: { acceptance: { accepted: boolean; kind: string | null; steps: { id: string; status: string }[]; advice: { id: string }[] } | null }[] }[] };
    expect(jj.mode).toBe('spade');
    expect(jj.acceptance).toMatchObject({ gate: 'spade', preset: 'spade-games', recipe: 'cmd/games/train_spade_8b.sh', reset_gate: false, env_validator: false });
    expect(jj.games[0]!.attempts[0]!.acceptance).toMatchObject({ accepted: false, kind: 'validate_game' });
    const ok = jj.games[0]!.attempts[1]!.acceptance!;
    expect(ok.accepted).toBe(true);
    expect(ok.steps.map((x) => [x.id, x.status])).toEqual([['validate_game', 'pass'], ['reset_gate', 'off'], ['env_validator', 'off']]);
    expect(ok.advice.some((x) => x.id === 'too-easy')).toBe(true);
    expect(j.games[0]!.attempts[0]!.answer).toBe('I forgot the code.');
    expect(j.games[0]!.attempts[1]!.rejected_because).toBeNull();
    expect(j.games[0]!.attempts[1]!.verdicts.some((v) => v.id === 'too-easy' && v.status === 'pass')).toBe(true);
    expect(j.games[1]!.attempts).toHaveLength(1);
    // Hinted play wins every time, unhinted never: regret 1, win rate 0, unsolvable for this agent.
    for (const g of j.games) {
      expect(g.hint).toBe('The number is lucky; answer as \\boxed{n}.');
      expect(g.regret).toBe(1);
      expect(g.win_rate).toBe(0);
      expect(g.class).toBe('unsolvable');
      // SPADE's designer reward (core/api/spadeBlend.ts): unhinted mean 0 is far below the 0.4-0.6
      // plateau (plateau 0), regret 1 floors to the clamp 1: blend = 0.6 x 0 + 0.4 x 1.
      expect(g.spade_blend).not.toBeNull();
      expect(g.spade_blend!.mean_reward).toBe(0);
      expect(g.spade_blend!.plateau).toBe(0);
      expect(g.spade_blend!.regret_norm).toBe(1);
      expect(g.spade_blend!.blend).toBeCloseTo(0.4, 12);
      expect(g.spade_blend!.masked).toBe(false);
      expect(g.spade_blend!.params.plateauWeight).toBe(0.6);
    }

    // Stored: the round, its attempts, and the games as environments with their lineage.
    const { db } = openDataDir(data);
    try {
      const view = roundView(db, j.round)!;
      expect(view.games.flatMap((g) => g.attempts)).toHaveLength(3);
      const env = db.prepare('SELECT name, skill, meta, source_run FROM environments WHERE id = ?').get(j.games[1]!.env_id) as { name: string; skill: string; meta: string; source_run: string };
      expect(env.name).toBe('SevenEnv');
      expect(env.skill).toBe('Optimization');
      expect(JSON.parse(env.meta)).toMatchObject({ design: { round: j.round, game: 1, attempt: 1 } });
    } finally {
      db.close();
    }

    // SPADE's layout: the games with SPADE's header, the cache step with hints, env_memory.json with numbers.
    const files = readdirSync(join(out, 'spade_games')).sort();
    const games = files.filter((f) => f.endsWith('.py'));
    expect(games).toEqual(['game_00001_000_logical_deduction.py', 'game_00001_001_optimization.py']);
    // Beside each, the workbench's `<stem>.json` (SPADE reads only the .py): no seeds here, so no parents.
    expect(files.filter((f) => f.endsWith('.json'))).toEqual(['game_00001_000_logical_deduction.json', 'game_00001_001_optimization.json']);
    expect(JSON.parse(readFileSync(join(out, 'spade_games', 'game_00001_001_optimization.json'), 'utf8'))).toMatchObject({ skill: 'Optimization', parents: [], design: { round: j.round, game: 1 } });
    expect(readFileSync(join(out, 'spade_games', games[0]!), 'utf8').startsWith('"""SPADE self-play generated game"""\n\nimport random\nclass LuckyEnv')).toBe(true);
    expect(existsSync(join(out, 'spade_games_cache', 'step_00001', 'game_00001_001_optimization_hint.txt'))).toBe(true);
    const memory = JSON.parse(readFileSync(join(out, 'spade_games_cache', 'env_memory.json'), 'utf8')) as { skill: string; actor_win_rate: number; regret: number; rollout_id: number }[];
    expect(memory.map((m) => [m.skill, m.actor_win_rate, m.regret, m.rollout_id])).toEqual([
      ['Logical Deduction', 0, 1, 1],
      ['Optimization', 0, 1, 1],
    ]);
    // The importer reads the round's output as it reads a training run's.
    let iout = '';
    const code = await main(['import', out, '--data-dir', join(tmp.dir, 'other'), '--json'], { out: (t) => (iout += t), err: () => {} });
    expect(code).toBe(0);
    expect(JSON.parse(iout)).toMatchObject({ imported: 2 });
  }, 300_000);

  it('refuses an unknown skill and a bad feedback mode before anything runs', async () => {
    expect(await run(['--skills', 'Juggling', '--data-dir', join(tmp.dir, 'x')]).catch((e: unknown) => e)).toBeTruthy();
    const a = await run(['--skills', 'Juggling', '--data-dir', join(tmp.dir, 'x')]);
    expect(a.code).not.toBe(0);
    expect(a.err).toMatch(/Unknown skill Juggling/);
    const b = await run(['--skills', 'Optimization', '--feedback', 'maybe', '--data-dir', join(tmp.dir, 'x')]);
    expect(b.err).toMatch(/--feedback is repair/);
    const p = await run(['--skills', 'Optimization', '--preset', 'paper', '--data-dir', join(tmp.dir, 'x')]);
    expect(p.err).toMatch(/--preset is one of spade-games, spade-tool-use, quick/);
    const g = await run(['--skills', 'Optimization', '--gate', 'fail', '--data-dir', join(tmp.dir, 'x')]);
    expect(g.err).toMatch(/--gate is spade .* or workbench/);
    // On a cluster the games are played there too: the nodes cannot call the embedded model (the default agent).
    const c = await run(['--skills', 'Optimization', '--on', 'ray://127.0.0.1:8265', '--data-dir', join(tmp.dir, 'x')]);
    expect(c.code).toBe(2);
    expect(c.err).toMatch(/--on ray:\/\/127\.0\.0\.1:8265: the accepted games are played there, but the embedded model plays only on this machine/);
  });

  it('makes one real attempt with the embedded model (SmolLM2): tokens produced, attempt stored, verdict given', async () => {
    const data = join(tmp.dir, 'local');
    const r = await run(['--skills', 'Pattern Recognition', '--count', '1', '--attempts', '1', '--designer', 'local', '--agent', 'local', '--max-tokens', '160', '--estimator', 'paired', '--play-seeds', '1', '--max-turns', '2', '--agent-max-tokens', '24', '--seed', '1', '--data-dir', data, '--json']);
    expect(r.err).toBe('');
    const j = JSON.parse(r.out) as { status: string; designer: { model: string }; games: { accepted: boolean; attempts: { answer: string; tokens: { completion: number | null }; verdicts: unknown[]; rejected_because: string | null }[] }[] };
    expect(j.status).toBe('done');
    expect(j.designer.model).toBe('SmolLM2-135M-Instruct');
    const a = j.games[0]!.attempts[0]!;
    expect(a.tokens.completion).toBeGreaterThan(0);
    expect(a.answer.length).toBeGreaterThan(0);
    expect(a.verdicts.length).toBeGreaterThan(0);
    // Whatever it wrote was judged: accepted, or rejected with a reason.
    expect(j.games[0]!.accepted || a.rejected_because !== null).toBe(true);
  }, 600_000);
});
