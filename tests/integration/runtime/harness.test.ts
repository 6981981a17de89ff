import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RuntimeService, RuntimeKind } from '../../../core/runtime/service';
import { probePython } from '../../../core/runtime/native';
import { GUESS_GAME, makeRuntime } from './helpers';
import type { HarnessRequest } from '../../../core/runtime/protocol';

let rt: RuntimeService;
beforeAll(async () => {
  rt = makeRuntime();
  await rt.pool.start();
});
afterAll(async () => {
  await rt.shutdown();
});

async function open(source: string, runtime: RuntimeKind, extra: { maxTurns?: number; mode?: 'respect' | 'legacy'; deterministic?: boolean; spadeMode?: boolean } = {}) {
  const r = await rt.open({ source, runtime, ...extra });
  if (!r.ok) throw new Error(`load failed: ${JSON.stringify(r.error)}`);
  return r;
}

async function call(sid: string, req: HarnessRequest): Promise<any> {
  const r = await rt.call(sid, req);
  if (!r.ok) throw new Error(`${String(req.cmd)} failed: ${JSON.stringify(r.error)}`);
  return r.result;
}

const runtimes: RuntimeKind[] = probePython() ? ['pyodide', 'cpython'] : ['pyodide'];

describe.each(runtimes)('harness in %s', (kind) => {
  test('load, reset, step, play, solution: SPADE loader semantics and real types', async () => {
    const s = await open(GUESS_GAME, kind, { maxTurns: 25 });
    expect(s.runtime).toBe(kind);
    expect(s.load.className).toBe('GuessEnv');
    // designed max_turns 40 capped at the budget 25
    expect(s.load.maxTurns).toBe(25);
    expect(s.load.hasSolution).toBe(true);
    const reset = await call(s.sessionId, { cmd: 'reset', seed: 7 });
    expect(reset).toMatchObject({ observation: 'Guess a number from 1 to 10', info: { range: 10 }, types: ['str', 'dict'], shape: 'tuple2' });
    const sol = await call(s.sessionId, { cmd: 'solution' });
    const wrong = String((Number(sol.value) % 10) + 1);
    const step = await call(s.sessionId, { cmd: 'step', action: `\\boxed{${wrong}}` });
    // the game returns int 0 as reward here: reported as int, not coerced to float
    expect(step).toMatchObject({ observation: 'Wrong', reward: 0, terminated: false, truncated: false, types: ['str', 'int', 'bool', 'bool', 'dict'], shape: 'tuple5' });
    const play = await call(s.sessionId, { cmd: 'play', seed: 7, actions: ['no box', `\\boxed{${wrong}}`, `\\boxed{${sol.value}}`, '\\boxed{1}'] });
    expect(play.steps.map((x: any) => x.reward)).toEqual([0, 0, 1]);
    expect(play.steps[2].types[1]).toBe('float');
    expect(play.steps[2].terminated).toBe(true);
    // same seed, same episode
    const again = await call(s.sessionId, { cmd: 'play', seed: 7, actions: ['no box', `\\boxed{${wrong}}`, `\\boxed{${sol.value}}`] });
    expect(again).toEqual({ ...play, steps: play.steps.slice(0, 3) });
  });

  test('exceptions carry a traceback with line numbers in the environment source', async () => {
    const s = await open(GUESS_GAME, kind);
    await call(s.sessionId, { cmd: 'reset', seed: 1 });
    const r = await rt.call(s.sessionId, { cmd: 'step', action: '\\boxed{crash}' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.kind).toBe('env_error');
    expect(r.error.type).toBe('KeyError');
    const expectedLine = GUESS_GAME.split('\n').findIndex((l) => l.includes('{}["missing"]')) + 1;
    expect(r.error.line).toBe(expectedLine);
    expect(r.error.traceback).toContain(`File "<env>", line ${expectedLine}, in step`);
    expect(r.error.traceback).not.toContain('harness.py');
  });

  test("a traceback that passes through the harness's own code shows only the game's frames", async () => {
    // sys.stdout is the harness's capture: writing an object whose str() raises goes game -> harness -> game.
    const game = 'import sys\nclass Loud:\n    def __str__(self):\n        raise ValueError("no text")\nclass LoudEnv:\n    def reset(self, seed=None):\n        return "go", {}\n    def step(self, action):\n        sys.stdout.write(Loud())\n        return "x", 0.0, True, False, {}\n';
    const s = await open(game, kind);
    await call(s.sessionId, { cmd: 'reset', seed: 1 });
    const r = await rt.call(s.sessionId, { cmd: 'step', action: 'a' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.type).toBe('ValueError');
    expect(r.error.traceback).toContain('File "<env>", line 9, in step');
    expect(r.error.traceback).toContain('File "<env>", line 4, in __str__');
    // Only the game's frames: no file of the workbench's own (natively native/, in Pyodide /spade/).
    expect([...r.error.traceback!.matchAll(/File "([^"]+)"/g)].map((m) => m[1])).toEqual(['<env>', '<env>']);
  });

  test('load errors name SPADE stage; first class ending in Env wins (the helper trap)', async () => {
    const syntax = await rt.open({ source: 'class XEnv:\n  def reset(self:\n', runtime: kind });
    expect(syntax.ok).toBe(false);
    if (!syntax.ok) expect(syntax.error).toMatchObject({ kind: 'load_error', stage: 'syntax', line: 2 });
    const trap = await rt.open({ source: `class HelperEnv:\n    pass\n\n${GUESS_GAME}`, runtime: kind });
    expect(trap.ok).toBe(false);
    if (!trap.ok) expect(trap.error).toMatchObject({ stage: 'missing_method' });
    const none = await rt.open({ source: 'class Game:\n    pass\n', runtime: kind });
    if (!none.ok) expect(none.error.stage).toBe('no_class');
    const exec = await rt.open({ source: 'x = 1\nraise ValueError("at import")\n', runtime: kind });
    expect(exec.ok).toBe(false);
    if (!exec.ok) expect(exec.error).toMatchObject({ stage: 'exec', line: 2, type: 'ValueError' });
    // ToolUseBaseEnv and Env are never picked even though they end in Env
    const base = await rt.open({ source: 'Env = object\n', runtime: kind });
    if (!base.ok) expect(base.error.stage).toBe('no_class');
  });

  test('instantiation modes and the max_turns budget', async () => {
    const src = `class NoArgEnv:\n    def __init__(self):\n        self.made = "plain"\n        self.max_turns = 100\n    def reset(self, seed=None):\n        return "o", {}\n    def step(self, a):\n        return "o", 0.0, False, False, {}\n`;
    const a = await open(src, kind, { maxTurns: 30 });
    expect(a.load.maxTurns).toBe(30);
    const kw = `class KwEnv:\n    def __init__(self, max_turns):\n        self.max_turns = max_turns\n    def reset(self, seed=None):\n        return "o"\n    def step(self, a):\n        return "o", 0.0, False, False, {}\n`;
    const b = await open(kw, kind, { maxTurns: 50 });
    expect(b.load.maxTurns).toBe(50);
    expect(await call(b.sessionId, { cmd: 'reset' })).toMatchObject({ observation: 'o', shape: 'str' });
    const both = `class BothEnv:\n    def __init__(self, max_turns=7):\n        self.max_turns = max_turns\n    def reset(self, seed=None):\n        return "o", {}\n    def step(self, a):\n        return "o", 0.0, False, False, {}\n`;
    expect((await open(both, kind, { maxTurns: 25, mode: 'respect' })).load.maxTurns).toBe(7);
    expect((await open(both, kind, { maxTurns: 25, mode: 'legacy' })).load.maxTurns).toBe(25);
  });

  test('state tree, snapshot and restore', async () => {
    const s = await open(GUESS_GAME, kind);
    await call(s.sessionId, { cmd: 'reset', seed: 3 });
    await call(s.sessionId, { cmd: 'step', action: '\\boxed{0}' });
    const st = await call(s.sessionId, { cmd: 'state' });
    expect(st.className).toBe('GuessEnv');
    const fields = Object.fromEntries(st.fields);
    expect(fields.turn).toEqual({ t: 'int', v: 1 });
    expect(fields.history).toMatchObject({ t: 'collections.deque', len: 1, items: [{ t: 'str', v: '0' }] });
    const snap = await call(s.sessionId, { cmd: 'snapshot' });
    expect(snap.method).toBe('deepcopy');
    await call(s.sessionId, { cmd: 'step', action: '\\boxed{0}' });
    await call(s.sessionId, { cmd: 'restore', token: snap.token });
    expect(Object.fromEntries((await call(s.sessionId, { cmd: 'state' })).fields).turn).toEqual({ t: 'int', v: 1 });
    // restore twice from the same token
    await call(s.sessionId, { cmd: 'step', action: '\\boxed{0}' });
    await call(s.sessionId, { cmd: 'restore', token: snap.token });
    expect(Object.fromEntries((await call(s.sessionId, { cmd: 'state' })).fields).turn).toEqual({ t: 'int', v: 1 });
    const big = await open(`class BigEnv:\n    def __init__(self):\n        self.text = "x" * 5000\n        self.items = list(range(500))\n        self.gen = (i for i in range(3))\n    def reset(self, seed=None):\n        return "o", {}\n    def step(self, a):\n        return "o", 0.0, False, False, {}\n`, kind);
    const bs = Object.fromEntries((await call(big.sessionId, { cmd: 'state' })).fields);
    expect(bs.text.v).toContain('[+4700 chars]');
    expect(bs.items).toMatchObject({ len: 500, more: 450 });
    const bad = await rt.call(big.sessionId, { cmd: 'snapshot' });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error.kind).toBe('snapshot_unsupported');
    expect(await rt.close(big.sessionId)).toBe(true);
    expect((await rt.call(big.sessionId, { cmd: 'state' })).ok).toBe(false);
  });

  test('seeds: SPADE mode does not pre-seed (a game ignoring its seed is not reproducible, and says so); deterministic: true does', async () => {
    const src = `class RngEnv:\n    def reset(self, seed=None):\n        return str(random.random()), {}\n    def step(self, a):\n        return str(random.random()), 0.0, False, False, {}\n`;
    const a = await open(src, kind);
    const a1 = await call(a.sessionId, { cmd: 'reset', seed: 5 });
    const a1again = await call(a.sessionId, { cmd: 'reset', seed: 5 });
    // SPADE: the process's random stream goes on, so the same seed deals another episode
    expect(a1again.observation).not.toBe(a1.observation);
    expect(a1).toMatchObject({ seedIgnored: true, seeded: [] });
    const seeding = await open(GUESS_GAME, kind);
    const g = await call(seeding.sessionId, { cmd: 'reset', seed: 5 });
    expect(g.seeded).toEqual(['random.seed']);
    expect(g.seedIgnored).toBeUndefined();
    // the workbench's own determinism, as a labelled option: seeded per reset, a private random
    const d = await open(src, kind, { deterministic: true });
    expect(d.load).toMatchObject({ deterministic: true, spadeMode: true });
    const d1 = await call(d.sessionId, { cmd: 'reset', seed: 5 });
    const d2 = await call(d.sessionId, { cmd: 'step', action: 'x' });
    const d1again = await call(d.sessionId, { cmd: 'reset', seed: 5 });
    const d2again = await call(d.sessionId, { cmd: 'step', action: 'x' });
    expect(d1again.observation).toBe(d1.observation);
    expect(d2again.observation).toBe(d2.observation);
  });

  test('string hashing is not fixed (SPADE sets no PYTHONHASHSEED): set order differs between interpreters', async () => {
    const src = `class SetEnv:\n    def reset(self, seed=None):\n        return str(hash("spade")), {}\n    def step(self, a):\n        return "o", 0.0, True, False, {}\n`;
    const seen = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const s = await open(src, kind);
      expect(s.load).toMatchObject({ hashSeed: null });
      seen.add((await call(s.sessionId, { cmd: 'reset', seed: 0 })).observation);
      if (kind === 'pyodide') rt.pool.killSessionWorker(s.sessionId);
      // Native sessions are forked from one server (one process, as in SPADE): a new server is a new interpreter.
      else await rt.native.shutdown();
    }
    // three interpreters with a fixed hash seed would agree; random seeds collide with ~2^-60 odds
    expect(seen.size).toBeGreaterThan(1);
  });

  test('tool-use environments get SPADE’s ToolUseBaseEnv: step texts, execute_tool, get_tools', async () => {
    const src = String.raw`from tool_use_base_env import ToolUseBaseEnv as Base
assert Base is ToolUseBaseEnv
class LookupEnv(ToolUseBaseEnv):
    def reset(self, seed=None):
        self.turn_count = 0
        self._tools = {"get_price": {"description": "price of an item", "parameters": {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}}}
        self._state = {"prices": {"apple": 1.25}}
        self._expected_answer = "1.25"
        return "What does an apple cost?", {}
    def solution(self):
        return "1.25"
    def tool_get_price(self, item):
        return str(self._state["prices"][item])
`;
    const s = await open(src, kind, { maxTurns: 7 });
    expect(s.load).toMatchObject({ toolUse: true, maxTurns: 7, validation: { ok: true, message: null } });
    await call(s.sessionId, { cmd: 'reset', seed: 0 });
    const fields = Object.fromEntries((await call(s.sessionId, { cmd: 'state' })).fields);
    // SPADE's base fields, and nothing only the workbench's old base class had
    expect(Object.keys(fields).sort()).toEqual(['_call_history', '_expected_answer', '_state', '_tools', 'max_turns', 'turn_count']);
    const r = await call(s.sessionId, {
      cmd: 'play',
      reset: false,
      actions: ['<tool_call>{"name": "get_price", "arguments": {"item": "apple"}}</tool_call>', '<tool_call>{bad json</tool_call>', '<tool_call>{"name": "nope", "arguments": {}}</tool_call>', 'hello', '<answer>1.26</answer>', '<answer>$1.2549</answer>', '<answer>x</answer>'],
    });
    const obs = r.steps.map((x: any) => [x.observation, x.reward, x.terminated, x.truncated]);
    expect(obs).toEqual([
      ['Tool result:\n1.25', 0, false, false],
      ['Format error: invalid tool call arguments.', -0.1, false, false],
      ["Unknown tool 'nope'. Available: get_price", 0, false, false],
      ['Format error: use tools to call a function, or <answer>result</answer> to submit.', -0.1, false, false],
      // strict: |1.26 - 1.25| is not < 0.01
      ['Incorrect. Keep using tools.', 0, false, false],
      ['Correct!', 1, true, false],
    ]);
    expect(await call(s.sessionId, { cmd: 'get_tools' })).toEqual([{ type: 'function', function: { name: 'get_price', description: 'price of an item', parameters: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'] } } }]);
    expect(await call(s.sessionId, { cmd: 'tool', name: 'get_price', arguments: { item: 'apple' } })).toEqual({ output: '1.25', returncode: 0 });
    expect(await call(s.sessionId, { cmd: 'tool', name: 'get_price', arguments: { item: 'pear' } })).toEqual({ output: "Error calling get_price: 'pear'", returncode: 1 });
    expect(await call(s.sessionId, { cmd: 'tool', name: 'nope', arguments: {} })).toEqual({ output: "Unknown tool 'nope'", returncode: 1 });
    // out of turns (budget 7): the Time up / Wrong answer texts carry solution()
    await call(s.sessionId, { cmd: 'reset', seed: 0 });
    const t = await call(s.sessionId, { cmd: 'play', reset: false, actions: ['a', 'b', 'c', 'd', 'e', 'f', '<answer>2</answer>'] });
    expect(t.steps[6]).toMatchObject({ observation: 'Wrong answer. Solution:\n1.25', reward: 0, terminated: false, truncated: true });
    // a plain game has no tools; execute_tool is not supported
    const g = await open(GUESS_GAME, kind);
    expect(await call(g.sessionId, { cmd: 'get_tools' })).toEqual([]);
    expect(await call(g.sessionId, { cmd: 'tool', name: 'x', arguments: {} })).toEqual({ output: 'execute_tool not supported by GuessEnv', returncode: 1 });
    // a game calling the base reset fails to load, as in SPADE
    const sup = await rt.open({ source: 'class SupEnv(ToolUseBaseEnv):\n    def reset(self, seed=None):\n        super().reset(seed)\n        return "o", {}\n', runtime: kind });
    expect(sup.ok).toBe(false);
    if (!sup.ok) expect(sup.error).toMatchObject({ stage: 'instantiate', message: 'Failed to instantiate game class: Subclass must implement reset()' });
  });

  test('sessionless commands and a per-call time limit override', async () => {
    const ping = await rt.command(kind, { cmd: 'ping' });
    expect(ping.ok && (ping.result as { runtime: string }).runtime).toBe(kind);
    // hangs only on 'x': SPADE-mode load steps the probes \\boxed{1}... and must get through
    const s = await open(`class SlowEnv:\n    def reset(self, seed=None):\n        return "o", {}\n    def step(self, a):\n        while a == "x":\n            pass\n        return "o", 0.0, False, False, {}\n`, kind);
    const r = await rt.call(s.sessionId, { cmd: 'step', action: 'x' }, { timeoutMs: 1000 });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatchObject({ kind: 'timeout', limitSec: 1 });
    expect((await rt.call(s.sessionId, { cmd: 'reset' })).ok).toBe(true);
  });

  test('check_syntax uses Python’s parser', async () => {
    const ok = await rt.checkSyntax('x = 1\n', kind);
    expect(ok.ok && (ok.result as any).ok).toBe(true);
    const bad = await rt.checkSyntax('def f(:\n    pass\n', kind);
    expect(bad.ok).toBe(true);
    if (bad.ok) expect((bad.result as any).errors[0]).toMatchObject({ line: 1, col: 7 });
  });
});

describe.runIf(probePython()?.numpy)('native CPython specifics', () => {
  test('numpy is injected and numpy types are named, not coerced', async () => {
    const src = `class NpEnv:\n    def reset(self, seed=None):\n        return "o", {}\n    def step(self, a):\n        return "o", np.float64(0.5), np.bool_(True), False, {"x": np.int64(3)}\n`;
    const s = await open(src, 'cpython');
    const r = await call(s.sessionId, { cmd: 'step', action: 'a' });
    expect(r.types[1]).toBe('numpy.float64');
    expect(r.types[2]).toMatch(/^numpy\.bool_?$/);
    expect(r).toMatchObject({ reward: 0.5, terminated: true, info: { x: 3 } });
  });

  test('auto picks native CPython for numpy games and Pyodide otherwise', async () => {
    const np = await rt.open({ source: `import numpy as np\nclass NEnv:\n    def reset(self, seed=None):\n        return str(np.arange(3).sum()), {}\n    def step(self, a):\n        return "o", 0.0, True, False, {}\n`, runtime: 'auto' });
    expect(np.ok && np.runtime).toBe('cpython');
    expect(np.fallbackReason).toContain('numpy');
    const plain = await rt.open({ source: GUESS_GAME, runtime: 'auto' });
    expect(plain.ok && plain.runtime).toBe('pyodide');
    // an import only discovered at load time in Pyodide also falls back
    const hidden = await rt.open({ source: `mod = __import__("num" + "py")\nclass HEnv:\n    def reset(self, seed=None):\n        return "o", {}\n    def step(self, a):\n        return "o", 0.0, True, False, {}\n`, runtime: 'auto' });
    expect(hidden.ok && hidden.runtime).toBe('cpython');
    expect(hidden.fallbackReason).toContain('imports numpy');
  });
});
