// A design game attempt by attempt: a scripted designer (the stand-in OpenAI-compatible server, so
// the exact prompts can be asserted) and the real audit (SPADE's load checks, its random-guess test
// and the workbench's checks, in native CPython inside bubblewrap).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AuditPool } from '../../../core/audit/pool';
import { ChatClient, type EndpointConfig } from '../../../core/models/client';
import { designGame, type GameSpec } from '../../../core/design/attempt';
import type { MemoryRecord } from '../../../core/design/seeds';
import { startStandIn, type StandIn } from '../../helpers/standInOpenAi';

let pool: AuditPool;
beforeAll(() => {
  pool = new AuditPool({ workers: 1, envTimeoutSec: 60 });
});
afterAll(async () => {
  await pool.close();
});
let server: StandIn | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const client = (url: string) => new ChatClient({ baseUrl: url, model: 'designer', apiKey: null, temperature: 0.6, topP: 0.95, topK: 20, maxTokens: 4096, thinking: null, turnTimeoutMs: 30_000, retries: 0, concurrency: 1, stream: false } satisfies EndpointConfig);

const BROKEN = 'class BrokenEnv:\n    def reset(self, seed=None)\n        return "x", {}\n';
// Any boxed number wins: SPADE's random-guess test rejects it.
const EASY = `import random
class EasyEnv:
    def __init__(self, max_turns=10):
        self.max_turns = max_turns
    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.t = 0
        return "Say any number as \\\\boxed{n}.", {}
    def step(self, action):
        self.t += 1
        return "Yes.", 1.0, True, False, {}
    def solution(self):
        return "1"
`;
// A secret in 1..1000 found by halving: random guesses almost never win.
const GOOD = `import random
class HalvingEnv:
    def __init__(self, max_turns=12):
        self.max_turns = max_turns
        self.secret = 0
        self.t = 0
    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.secret = random.randint(1, 1000)
        self.t = 0
        return "Find my number in 1-1000. Answer \\\\boxed{n}; I say higher or lower.", {}
    def step(self, action):
        self.t += 1
        import re
        m = re.search(r"\\\\boxed\\{([^}]*)\\}", action)
        try:
            g = int(m.group(1)) if m else None
        except ValueError:
            g = None
        if g == self.secret:
            return "Correct!", 1.0, True, False, {}
        done = self.t >= self.max_turns
        if g is None:
            return "Answer as \\\\boxed{n}.", 0.0, False, done, {}
        return ("higher" if g < self.secret else "lower"), 0.0, False, done, {}
    def solution(self):
        return str(self.secret)
`;

// GOOD, reading another process's command line at each reset (the sandbox refuses and reports it),
// and the same with a first line that drops what the game writes to fd 2, where the reports go (issue 46).
const PRYING = GOOD.replace('        self.t = 0\n        return "Find', '        self.t = 0\n        try:\n            open("/proc/1/cmdline").read()\n        except OSError:\n            pass\n        return "Find');
const BLINDING = `import os, posix\n_w = os.write\nos.write = posix.write = lambda fd, data: len(data) if fd == 2 else _w(fd, data)\n${PRYING}`;

const fence = (code: string) => `Here is the game.\n\`\`\`python\n${code}\`\`\`\n`;
const rec = (envId: number, skill: string, winRate: number, regret: number): MemoryRecord => ({ envId, name: `game_${envId}`, skill, winRate, regret, snippet: `# seed ${envId}\nclass Seed${envId}Env: ...`, source: 'measured' });
const template = readFileSync(join(__dirname, '../../../resources/design/designer.txt'), 'utf8');
const spec = (over: Partial<GameSpec> = {}): GameSpec => ({
  skill: 'Logical Deduction',
  difficulty: 'medium',
  maxTurns: 12,
  template,
  memory: [rec(1, 'Logical Deduction', 0.5, 0.4), rec(2, 'Logical Deduction', 0.3, 0.3), rec(3, 'Logical Deduction', 0.95, 0.1), rec(4, 'Optimization', 0.5, 0.9)],
  attempts: 3,
  feedback: 'repair',
  seed: 11,
  // Today's behaviour before issue 44, kept as the labelled option: the workbench gate.
  acceptance: { gate: 'workbench', resetGate: false, envValidator: false, maxTurns: 12 },
  ...over,
});

type Msg = { role: string; content: string };
const msgs = (b: Record<string, unknown>) => b.messages as Msg[];

describe('designGame', () => {
  it('rejects a broken and a too-easy program with their reasons fed back, accepts the third, and writes its hint', async () => {
    const answers = [fence(BROKEN), fence(EASY), fence(GOOD)];
    server = await startStandIn((b) => {
      if (msgs(b)[0]!.role === 'system') return { content: '```json\n{"hint": "Halve the range each turn."}\n```' };
      return { content: answers[msgs(b).filter((m) => m.role === 'assistant').length]! };
    });
    const g = await designGame(spec(), { designer: client(server.url), check: (code, extra) => pool.audit(code, { maxTurns: 12, ...extra }) });
    expect(g.attempts.map((a) => a.rejectedBecause === null)).toEqual([false, false, true]);
    expect(g.attempts[0]!.rejectedBecause).toMatch(/^validate_game: Game validation failed: Syntax error in generated game code/);
    expect(g.attempts[1]!.rejectedBecause).toMatch(/^too-easy: /);
    expect(g.accepted).toBe(true);
    expect(g.className).toBe('HalvingEnv');
    expect(g.code).toBe(GOOD.replace(/\n$/, ''));
    expect(g.hint).toBe('Halve the range each turn.');

    // The prompts, exactly: the first is the filled template with two positive seeds of the skill
    // (ids 1 and 2, the only ones in the band) and the negative (3) by name; later attempts carry
    // the conversation with the rejection reason.
    const designerCalls = server.requests.filter((b) => msgs(b)[0]!.role === 'user');
    const first = msgs(designerCalls[0]!);
    expect(first).toHaveLength(1);
    expect(first[0]!.content).toBe(g.attempts[0]!.prompt);
    expect(first[0]!.content).toContain('trains an agent in Logical Deduction');
    expect(first[0]!.content).toMatch(/### Example 1 \(skill: Logical Deduction, win_rate: 0\.(50|30)/);
    expect(first[0]!.content).toContain('class Seed1Env');
    expect(first[0]!.content).toContain('class Seed2Env');
    expect(first[0]!.content).not.toContain('Seed4Env');
    expect(first[0]!.content).toContain('- too easy (win_rate=0.95): class game_3');
    expect(g.attempts[0]!.seeds).toEqual({ positives: expect.arrayContaining([1, 2]) as unknown as number[], negatives: [3] });
    const second = msgs(designerCalls[1]!);
    expect(second.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(second[1]!.content).toBe(fence(BROKEN));
    expect(second[2]!.content).toMatch(/^Your program was rejected: validate_game: Game validation failed: Syntax error/);
    const third = msgs(designerCalls[2]!);
    expect(third).toHaveLength(5);
    expect(third[4]!.content).toMatch(/^Your program was rejected: too-easy: /);
    // The accepted attempt's parents are the seeds it was shown.
    expect(g.parents.sort()).toEqual([1, 2]);
    // The hint request holds the code and nothing else of the game.
    const hintCall = server.requests.find((b) => msgs(b)[0]!.role === 'system')!;
    expect(msgs(hintCall)[1]!.content).toBe(`Environment code:\n\`\`\`python\n${g.code}\n\`\`\``);
  }, 180_000);

  it('rejects on sandbox a program that tries to leave the sandbox, also when it first replaces os.write, under either gate', async () => {
    expect(PRYING).toContain('/proc/1/cmdline');
    for (const gate of ['workbench', 'spade'] as const) {
      const answers = [fence(BLINDING), fence(PRYING), fence(GOOD)];
      server = await startStandIn((b) => {
        if (msgs(b)[0]!.role === 'system') return { content: '```json\n{"hint": "Halve the range each turn."}\n```' };
        return { content: answers[msgs(b).filter((m) => m.role === 'assistant').length]! };
      });
      const g = await designGame(spec({ acceptance: { gate, resetGate: false, envValidator: false, maxTurns: 12 } }), { designer: client(server.url), check: (code, extra) => pool.audit(code, { maxTurns: 12, ...extra }) });
      expect(g.attempts.map((a) => a.rejectedBecause === null), JSON.stringify(g.attempts.map((a) => a.rejectedBecause))).toEqual([false, false, true]);
      for (const a of g.attempts.slice(0, 2)) expect(a.rejectedBecause).toMatch(/^sandbox: Tried \d+ forbidden operations? \(open\)/);
      expect(g.code).toBe(GOOD.replace(/\n$/, ''));
      await server.close();
      server = null;
    }
  }, 240_000);

  it("SPADE's way: pins first, bans never, a fresh prompt per attempt, and an unanswered designer is an attempt with its error", async () => {
    let n = 0;
    server = await startStandIn(() => (n++ === 0 ? { status: 400, error: 'context too long' } : { content: 'no code at all' }));
    const g = await designGame(spec({ feedback: 'spade', attempts: 2, pins: [4], bans: [2, 3] }), { designer: client(server.url), check: (code, extra) => pool.audit(code, { maxTurns: 12, ...extra }) });
    expect(g.accepted).toBe(false);
    expect(g.attempts[0]!.error).toMatch(/HTTP 400: context too long/);
    expect(g.attempts[0]!.rejectedBecause).toMatch(/^the designer did not answer/);
    expect(g.attempts[1]!.codeFrom).toBe('whole-answer');
    expect(g.attempts[1]!.rejectedBecause).toMatch(/^validate_game: Game validation failed: /);
    for (const b of server.requests) {
      expect(msgs(b)).toHaveLength(1);
      expect(msgs(b)[0]!.content).toContain('class Seed4Env');
      expect(msgs(b)[0]!.content).toContain('class Seed1Env');
      expect(msgs(b)[0]!.content).not.toContain('Seed2Env');
      expect(msgs(b)[0]!.content).not.toContain('Avoid generating');
    }
  }, 120_000);

  it('keeps no hint the library could not export and import again: a 2 MiB hint is the hint error, the game is accepted without it', async () => {
    const huge = `Halve the range. ${'x'.repeat(2 * 1024 * 1024)}`;
    server = await startStandIn((b) => (msgs(b)[0]!.role === 'system' ? { content: huge } : { content: fence(GOOD) }));
    const g = await designGame(spec({ attempts: 1 }), { designer: client(server.url), check: (code, extra) => pool.audit(code, { maxTurns: 12, ...extra }) });
    expect(g.accepted).toBe(true);
    expect(g.hint).toBeNull();
    expect(g.hintError).toMatch(/^the hint model's answer is too large \(\d+ bytes; the limit is 1048576\)$/);
  }, 120_000);
});
