import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { main } from '../../../core/cli/main';
import type { CliIO } from '../../../core/cli/command';
import { firstPrompt } from '../../../core/episodes/hint';
import { openDataDir } from '../../../core/memory/cliDb';
import { ingest } from '../../../core/memory/repository';
import { tempDir } from '../../helpers/tmp';
import { startStandIn, type StandIn } from '../../helpers/standInOpenAi';
import { RuntimeService } from '../../../core/runtime/service';

const tmp = tempDir('spade-play-cli-');
afterAll(() => tmp.cleanup());
let server: StandIn | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

// The secret is always 7; the model (stand-in) guesses 7 only when the hint is in its first message.
const GAME = `import random

class GuessEnv:
    def __init__(self, max_turns=3):
        self.max_turns = max_turns

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn = 0
        return f"Guess my number (1-10). Game {random.randint(100, 999)}.", {}

    def step(self, action):
        self.turn += 1
        if action == "\\\\boxed{7}":
            return "Correct!", 1.0, True, False, {}
        return f"Not {action}.", 0.0, False, self.turn >= self.max_turns, {}

    def solution(self):
        return "7"
`;

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIO = { out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`) };
  const code = await main(['play', ...args], io);
  return { code, out, err };
}

const hinted = (b: Record<string, unknown>) => String((b.messages as { content: string }[])[0]!.content).includes('HINT: ');

describe('spade-workbench play', () => {
  it('plays ENV.py hinted and unhinted over seeds with a served model and prints SPADE regret as JSON', async () => {
    server = await startStandIn((b) => ({ content: hinted(b) ? 'The hint says \\boxed{7}' : 'I guess \\boxed{3}' }));
    const env = join(tmp.dir, 'guess.py');
    writeFileSync(env, GAME);
    const r = await run([env, '--endpoint', server.url, '--model', 'stand-in', '--seeds', '3', '--seed-start', '5', '--hint', ' the number is lucky \n', '--compare-hint', '--concurrency', '2', '--temperature', '0.6', '--max-tokens', '64', '--runtime', 'pyodide', '--json']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as {
      episodes: { seed: number; hint: boolean; return: number; terminated: boolean; truncated: boolean; steps: { action: string | null }[]; messages: { role: string; content: string }[] }[];
      regret: { r_hint: number; r_no_hint: number; regret: number }[];
    };
    expect(j.episodes).toHaveLength(6);
    expect(j.episodes.map((e) => [e.seed, e.hint]).sort()).toEqual([[5, false], [5, true], [6, false], [6, true], [7, false], [7, true]]);
    for (const e of j.episodes) {
      expect(e.return).toBe(e.hint ? 1 : 0);
      expect(e.terminated).toBe(e.hint);
      expect(e.truncated).toBe(!e.hint);
      // the messages recorded are the ones sent: the first carries the template and the verbatim hint
      const first = e.messages[0]!.content;
      expect(first.startsWith('You are playing a language game.')).toBe(true);
      if (e.hint) expect(first).toContain('\n\nHINT:  the number is lucky \n\nPlease reason');
      expect(server.requests.some((b) => JSON.stringify(b.messages) === JSON.stringify(e.messages.slice(0, -1)))).toBe(true);
    }
    const unhinted = j.episodes.find((e) => !e.hint)!;
    expect(unhinted.steps.filter((s) => s.action !== null).map((s) => s.action)).toEqual(['\\boxed{3}', '\\boxed{3}', '\\boxed{3}']);
    expect(unhinted.messages[0]!.content).toBe(firstPrompt(unhinted.messages[0]!.content.slice('You are playing a language game. Make valid actions to win.\nObservation: '.length, -'\nPlease reason step by step, and put your final answer within \\boxed{}.'.length)));
    expect(j.regret).toEqual([expect.objectContaining({ r_hint: 1, r_no_hint: 0, regret: 1 })]);
    expect(server.requests[0]).toMatchObject({ model: 'stand-in', temperature: 0.6, max_tokens: 64, top_p: 0.95, top_k: 20 });
  });

  it('plays a library selection and sets each regret beside the recorded one', async () => {
    server = await startStandIn((b) => ({ content: hinted(b) ? '\\boxed{7}' : '\\boxed{1}' }));
    const dir = join(tmp.dir, 'lib');
    const { db } = openDataDir(dir);
    ingest(db, { source: GAME.replace('Guess my', 'Guess, alpha, my'), path: join(dir, 'game_00001_001_logical_deduction.py'), fileStem: 'game_00001_001_logical_deduction', hint: 'pick 7' });
    ingest(db, { source: GAME.replace('Guess my', 'Guess, beta, my'), path: join(dir, 'game_00001_002_logical_deduction.py'), fileStem: 'game_00001_002_logical_deduction', hint: 'pick 7' });
    db.close();
    const r = await run(['--selection', 'Guess', '--data-dir', dir, '--endpoint', server.url, '--model', 'm', '--seeds', '1', '--concurrency', '1', '--runtime', 'pyodide', '--json']);
    expect(r.err).toBe('');
    const j = JSON.parse(r.out) as { regret: { regret: number; recorded_regret: number | null }[]; episodes: unknown[] };
    expect(j.regret).toHaveLength(2);
    expect(j.regret.every((x) => x.regret === 1)).toBe(true);
    expect(j.episodes).toHaveLength(4);
  });

  it('plays in native CPython by default where its sandbox is there (a cold CLI process does not start Pyodide interpreters), and says so', async () => {
    server = await startStandIn((b) => ({ content: hinted(b) ? '\\boxed{7}' : '\\boxed{1}' }));
    const env = join(tmp.dir, 'guess-auto.py');
    writeFileSync(env, GAME);
    const r = await run([env, '--endpoint', server.url, '--model', 'm', '--seeds', '2', '--hint', 'pick 7', '--compare-hint', '--json']);
    expect(r.err).toBe('');
    const j = JSON.parse(r.out) as { episodes: { runtime: string; return: number; hint: boolean }[] };
    const probe = new RuntimeService({ settings: () => ({ stepTimeoutSec: 30, maxTurns: 30, defaultRuntime: 'cpython' }) });
    const expected = probe.native.unavailable() === null ? 'cpython' : 'pyodide';
    await probe.shutdown();
    expect(j.episodes.map((e) => e.runtime)).toEqual(Array(4).fill(expected));
    expect(j.episodes.map((e) => e.return).sort()).toEqual([0, 0, 1, 1]);
    // --runtime pyodide still plays in the sandbox the app uses.
    const p = await run([env, '--endpoint', server.url, '--model', 'm', '--seeds', '1', '--runtime', 'pyodide', '--json']);
    expect((JSON.parse(p.out) as { episodes: { runtime: string }[] }).episodes.map((e) => e.runtime)).toEqual(['pyodide']);
  });

  it('refuses bad input with a clear message', async () => {
    const cases: [string[], RegExp][] = [
      [['x.py', '--model', 'm', '--seeds', '1'], /--endpoint URL is required/],
      [['x.py', '--endpoint', 'ftp://a', '--model', 'm', '--seeds', '1'], /must be an http\(s\) URL/],
      [['--endpoint', 'http://a', '--model', 'm', '--seeds', '1'], /Give one ENV.py, or --selection QUERY/],
      [['x.py', '--endpoint', 'http://a', '--model', 'm', '--seeds', '1', '--api-key-env', 'NOPE_NOT_SET_X'], /NOPE_NOT_SET_X/],
      [['x.py', '--endpoint', 'http://a', '--model', 'm'], /--seeds N is required/],
    ];
    for (const [args, msg] of cases) {
      const r = await run(args);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(msg);
    }
  });
});
