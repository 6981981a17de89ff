import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditPool } from '../../../core/audit/pool';
import { PyodideAuditRunner } from '../../../core/audit/pyodideRunner';
import type { CheckResult, EnvAudit } from '../../../core/audit/types';
import { PyodidePool } from '../../../core/runtime/pyodidePool';
import { ensureChildBuilt } from '../runtime/helpers';

/**
 * Issue 46, "checks that passed broken games": games a new user wrote, which the audit passed.
 * Each fixture (fixtures/issue46, written for these tests) is audited in real CPython and in the
 * real Pyodide sandbox, and both must give the same answer.
 */
ensureChildBuilt();
const dir = join(__dirname, 'fixtures', 'issue46');
const pyodide = new PyodidePool({ size: 1, graceMs: 2000 });
const native = new AuditPool({ workers: 2, envTimeoutSec: 20 });
const runner = new PyodideAuditRunner(() => pyodide, 40_000);
afterAll(async () => {
  await pyodide.shutdown();
  await native.close();
});

const read = (name: string) => readFileSync(join(dir, `${name}.py`), 'utf8');

async function both(source: string, checks: string[]): Promise<[string, EnvAudit][]> {
  const [a, b] = await Promise.all([native.audit(source, { checks }), runner.audit(source, { checks })]);
  return [
    ['native', a],
    ['pyodide', b],
  ];
}

function check(a: EnvAudit, id: string): CheckResult {
  const c = a.checks.find((x) => x.id === id);
  if (!c) throw new Error(`no ${id} in ${a.checks.map((x) => `${x.id}:${x.status}`).join(', ')}`);
  return c;
}

describe('reset-leak plays the actions that change state', () => {
  it('a wrong guess that removes a card from a module-level cached deck fails reset-leak', async () => {
    for (const [runtime, a] of await both(read('deck_cache'), ['reset-leak'])) {
      const c = check(a, 'reset-leak');
      const where = `${runtime}: ${c.message}`;
      expect(c.status, where).toBe('fail');
      expect(c.evidence.attributes as string[], where).toContain('global _DECK_CACHE');
      // The episode that left it behind is in the evidence, for Replay: not the solution's one guess.
      const target = (c.evidence.expected as Record<string, string>)['global _DECK_CACHE'];
      expect(target, where).toBeTruthy();
      expect((c.evidence.actions as string[]).length, where).toBeGreaterThan(0);
      // The global changes through self.cards, the very list it caches: that line is named first.
      expect(c.evidence.sharedWith, where).toBe("self.cards is _DECK_CACHE['cards']");
      const removal = read('deck_cache').split('\n').findIndex((l) => l.includes('self.cards.remove(guess)')) + 1;
      expect(c.evidence.line, where).toBe(removal);
      expect(c.message, where).toContain(`(line ${removal}, in step) grows it`);
    }
  }, 120_000);
});

describe('aliasing: data returned by one call that a later call changes', () => {
  it('an info list the game keeps appending to fails `aliasing`, naming the step that changed it', async () => {
    for (const [runtime, a] of await both(read('info_alias'), ['aliasing'])) {
      const c = check(a, 'aliasing');
      const where = `${runtime}: ${c.message}`;
      expect(c.status, where).toBe('fail');
      expect(c.evidence.part, where).toBe('info');
      expect(c.evidence.returnedBy, where).toBe('reset');
      expect(c.evidence.changedBy, where).toBe('step 1');
      expect(String(c.evidence.expected), where).toContain('"trail": []');
    }
  }, 120_000);

  it('a game that returns fresh values passes, and one that returns the same unchanged dict too', async () => {
    const fresh = read('info_alias').replaceAll('{"trail": self.trail}', '{"trail": list(self.trail)}');
    const constant = read('info_alias').replace('class TrailGuessEnv:', 'EMPTY = {"kind": "guess"}\n\n\nclass TrailGuessEnv:').replaceAll('{"trail": self.trail}', 'EMPTY');
    for (const source of [fresh, constant]) {
      for (const [runtime, a] of await both(source, ['aliasing'])) {
        const c = check(a, 'aliasing');
        expect(c.status, `${runtime}: ${c.message}`).toBe('pass');
      }
    }
  }, 120_000);

  it('a value changed by a later reset is caught too', async () => {
    const source = read('info_alias').replace('        self.trail = []\n', '        self.trail = getattr(self, "trail", [])\n        self.trail.clear()\n');
    for (const [runtime, a] of await both(source, ['aliasing'])) {
      const c = check(a, 'aliasing');
      expect(c.status, `${runtime}: ${c.message}`).toBe('fail');
    }
  }, 120_000);

  it('a returned value whose description hangs once read again fails the check, not the audit', async () => {
    // Hostile: the info holds an object of the game's whose repr loops forever after the first
    // step; reading it again runs game code, which the check bounds as any call into the game.
    const source = read('info_alias')
      .replace('class TrailGuessEnv:', 'class Trap:\n    def __init__(self, env):\n        self.env = env\n\n    def __repr__(self):\n        while self.env.turn > 0:\n            pass\n        return "trap"\n\n\nclass TrailGuessEnv:')
      .replace('return "Guess the number from 1 to 50 as \\\\boxed{n}.", {"trail": self.trail}', 'return "Guess the number from 1 to 50 as \\\\boxed{n}.", {"trap": Trap(self)}');
    expect(source).toContain('{"trap": Trap(self)}');
    for (const [runtime, a] of await both(source, ['aliasing', 'determinism'])) {
      const c = check(a, 'aliasing');
      expect(c.status, `${runtime}: ${c.message}`).toBe('fail');
      // Either the read is cut at its limit (a hang) or the description caught it (a change): both fail it.
      expect(c.message, runtime).toMatch(/hung|changed afterwards/);
      expect(check(a, 'determinism').status, runtime).not.toBe('skip');
    }
  }, 120_000);
});

describe('seed-ignored: a stored seed alone is not a seeded game', () => {
  it('reset(seed) that keeps self.seed but draws from a fixed base seed warns', async () => {
    for (const [runtime, a] of await both(read('seed_stored'), ['seed-ignored'])) {
      const c = check(a, 'seed-ignored');
      const where = `${runtime}: ${c.message}`;
      expect(c.status, where).toBe('warn');
      expect(c.evidence.seedOnly, where).toEqual(['self.seed']);
    }
  }, 120_000);

  it('a game that keeps the seed and draws its puzzle from it at the first step still passes', async () => {
    for (const [runtime, a] of await both(read('seed_lazy'), ['seed-ignored'])) {
      const c = check(a, 'seed-ignored');
      expect(c.status, `${runtime}: ${c.message}`).toBe('pass');
    }
  }, 120_000);

  it('a fixed random.Random kept on the instance (a new object, a new address, each reset) still warns', async () => {
    const source = read('seed_stored').replace('        rng = random.Random(BASE_SEED)\n        self.code = rng.randint(100, 999)', '        self.rng = random.Random(BASE_SEED)\n        self.code = self.rng.randint(100, 999)');
    for (const [runtime, a] of await both(source, ['seed-ignored'])) {
      const c = check(a, 'seed-ignored');
      expect(c.status, `${runtime}: ${c.message}`).toBe('warn');
    }
  }, 120_000);
});

describe('tool use: solution() text is played as SPADE means it (the calls, then the answer)', () => {
  it.each(['tool_pantry', 'tool_steps'])('%s passes solution and tool.done_reachable', async (name) => {
    for (const [runtime, a] of await both(read(name), ['solution', 'tool.*'])) {
      for (const id of ['solution', 'tool.done_reachable']) {
        const c = check(a, id);
        expect(c.status, `${runtime} ${id}: ${c.message} ${JSON.stringify(c.evidence)}`).toBe('pass');
      }
    }
  }, 120_000);

  it('a described plan that does not reach the goal still fails (the answer alone does not win)', async () => {
    const source = read('tool_pantry').replace('3. put(item="rice", box="grains") -> Put rice into grains ', '');
    for (const [runtime, a] of await both(source, ['solution', 'tool.*'])) {
      for (const id of ['solution', 'tool.done_reachable']) expect(check(a, id).status, `${runtime} ${id}`).toBe('fail');
    }
  }, 120_000);

  it('a hostile solution() text (200,000 open calls) is read within bounds and fails as unsolvable', async () => {
    const source = read('tool_pantry').replace(/def solution\(self\) -> str:\n[\s\S]*$/, 'def solution(self) -> str:\n        return "go(" * 200000 + "ANSWER: shelf/grains/rice"\n');
    expect(source).toContain('"go(" * 200000');
    for (const [runtime, a] of await both(source, ['solution', 'tool.*'])) {
      for (const id of ['solution', 'tool.done_reachable']) expect(check(a, id).status, `${runtime} ${id}: ${check(a, id).message}`).toBe('fail');
    }
  }, 120_000);
});

/**
 * SPADE's own two examples, taken from its prompt template when a SPADE checkout is named by
 * SPADE_SRC (never copied into this tree): they must not fail as unsolvable.
 */
const spadeSrc = process.env.SPADE_SRC;
const template = spadeSrc ? join(spadeSrc, 'spade', 'core', 'prompts', 'tool_use_template.py') : '';
const haveSpade = Boolean(spadeSrc && existsSync(template));
if (!haveSpade) console.warn('[SPADE tool-use examples skipped] set SPADE_SRC to a SPADE checkout (with spade/core/prompts/tool_use_template.py) to audit its own examples');
describe.skipIf(!haveSpade)('SPADE tool-use prompt examples (SPADE_SRC)', () => {
  it('both examples pass solution and tool.done_reachable in both runtimes', async () => {
    const python = join(process.env.SPADE_WORKBENCH_VENV ?? '', 'bin', 'python');
    // The template's prompts, as SPADE renders them; the examples are their ```python blocks.
    const script = [
      'import importlib.util, json, sys',
      'spec = importlib.util.spec_from_file_location("t", sys.argv[1]); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)',
      'single = m.generate_tool_use_prompt("Multi-Step Workflows", m.TOOL_USE_SKILLS["Multi-Step Workflows"])',
      'print(json.dumps([single, m._V_MULTITURN_PROMPT]))',
    ].join('\n');
    const prompts = JSON.parse(execFileSync(existsSync(python) ? python : 'python3', ['-c', script, template], { encoding: 'utf8' })) as string[];
    const examples = prompts.map((p) => /```python\n([\s\S]*?)```/.exec(p)?.[1] ?? '');
    expect(examples.map((e) => /class (\w+Env)\(ToolUseBaseEnv\)/.exec(e)?.[1])).toEqual(['FileOrganizerEnv', 'FileWorkflowMTEnv']);
    for (const source of examples) {
      for (const [runtime, a] of await both(source, ['solution', 'tool.*'])) {
        for (const id of ['solution', 'tool.done_reachable']) {
          const c = check(a, id);
          expect(c.status, `${runtime} ${id}: ${c.message}`).toBe('pass');
        }
      }
    }
  }, 180_000);
});
