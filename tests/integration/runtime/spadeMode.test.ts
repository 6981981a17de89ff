import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RuntimeService, RuntimeKind } from '../../../core/runtime/service';
import { probePython } from '../../../core/runtime/native';
import { makeRuntime } from './helpers';
import type { HarnessRequest } from '../../../core/runtime/protocol';

/**
 * SPADE mode (the default): what SPADE's wrapper makes of every step and reset, SPADE's
 * instantiation and max_turns rules, and SPADE's load validation run on the instance that is
 * then played. Expected values are SPADE-FORMATS.md sections 2 and 5 as checked against SPADE's
 * code (spade/core/envs/synthetic_game_env.py at 9b2b813).
 */
let rt: RuntimeService;
beforeAll(async () => {
  rt = makeRuntime();
  await rt.pool.start();
});
afterAll(async () => {
  await rt.shutdown();
});

async function open(source: string, runtime: RuntimeKind, extra: { maxTurns?: number; mode?: 'respect' | 'legacy' } = {}) {
  const r = await rt.open({ source, runtime, ...extra });
  if (!r.ok) throw new Error(`load failed: ${JSON.stringify(r.error)}`);
  return r;
}

async function call(sid: string, req: HarnessRequest): Promise<any> {
  const r = await rt.call(sid, req);
  if (!r.ok) throw new Error(`${String(req.cmd)} failed: ${JSON.stringify(r.error)}`);
  return r.result;
}

/** A game whose step returns, for action k, RETURNS[k] (probe actions get a plain valid step). */
function oddGame(returns: Record<string, string>, extra = ''): string {
  const table = Object.entries(returns).map(([k, v]) => `        if action == ${JSON.stringify(k)}:\n            return ${v}\n`).join('');
  return `class OddEnv:\n    def reset(self, seed=None):\n        return "start", {}\n    def step(self, action):\n${extra}${table}        return "ok", 0.0, False, False, {}\n`;
}

const runtimes: RuntimeKind[] = probePython() ? ['pyodide', 'cpython'] : ['pyodide'];

describe.each(runtimes)('SPADE mode in %s', (kind) => {
  test('every step gets SPADE’s wrapper conversion beside the raw values', async () => {
    const src = oddGame({
      one: `"o", 1.0, 1, 0, {}`,
      yes: `"o", 1, "yes", None, {"n": 2, "s": "dropped", "b": True, "z": None, "l": [1]}`,
      none: `None, None, None, None, None`,
      num: `42, "0.5", [], (), "not a dict"`,
      nan: `"o", float("nan"), False, False, {}`,
      raises: `{}["missing"]`,
      short: `("o", 1.0)`,
      badreward: `"o", "abc", False, False, {}`,
    });
    const s = await open(src, kind);
    const step = (action: string) => rt.call(s.sessionId, { cmd: 'step', action });
    const ok = async (action: string) => {
      const r = await step(action);
      expect(r.ok, action).toBe(true);
      return (r as { result: any }).result;
    };
    const one = await ok('one');
    expect(one).toMatchObject({ terminated: 1, truncated: 0, types: ['str', 'float', 'int', 'int', 'dict'] });
    expect(one.spade).toEqual({ observation: 'o', reward: 1, terminated: true, truncated: false, info: {} });
    const yes = await ok('yes');
    expect(yes.spade).toEqual({ observation: 'o', reward: 1, terminated: true, truncated: false, info: { n: 2, b: true, z: null } });
    expect((await ok('none')).spade).toEqual({ observation: 'No observation', reward: 0, terminated: false, truncated: false, info: {} });
    expect((await ok('num')).spade).toEqual({ observation: '42', reward: 0.5, terminated: false, truncated: false, info: {} });
    expect((await ok('nan')).spade).toMatchObject({ reward: 'NaN' });
    expect((await ok('short')).spade).toEqual({ observation: 'Invalid game response', reward: -1, terminated: true, truncated: false, info: {}, error: 'shape' });
    // float("abc") raises inside SPADE's wrapper: the step becomes an error step
    expect((await ok('badreward')).spade).toEqual({ observation: "Error: could not convert string to float: 'abc'", reward: -1, terminated: true, truncated: false, info: {}, error: 'exception' });
    const raised = await step('raises');
    expect(raised.ok).toBe(false);
    if (!raised.ok) {
      expect(raised.error.type).toBe('KeyError');
      expect(raised.error.spade).toEqual({ observation: "Error: 'missing'", reward: -1, terminated: true, truncated: false, info: {}, error: 'exception' });
    }
  });

  test('play stops where SPADE’s converted flags end the episode (truthy 1 / "yes"), and a raising step is a -1 terminal step', async () => {
    const src = oddGame({ one: `"o", 1.0, 1, False, {}`, yes: `"o", 0.5, False, "yes", {}`, raises: `1 / 0` });
    const s = await open(src, kind);
    const a = await call(s.sessionId, { cmd: 'play', actions: ['x', 'one', 'x'] });
    expect(a.steps).toHaveLength(2);
    expect(a.steps[1].spade).toMatchObject({ reward: 1, terminated: true });
    const b = await call(s.sessionId, { cmd: 'play', actions: ['yes', 'x'] });
    expect(b.steps).toHaveLength(1);
    expect(b.steps[0].spade).toMatchObject({ truncated: true, terminated: false });
    const c = await call(s.sessionId, { cmd: 'play', actions: ['x', 'raises', 'x'] });
    expect(c.steps).toHaveLength(2);
    expect(c.steps[1]).toMatchObject({ action: 'raises', error: { type: 'ZeroDivisionError' }, spade: { observation: 'Error: division by zero', reward: -1, terminated: true, error: 'exception' } });
  });

  test('reset: bare str accepted, other values str(), an exception is SPADE’s "Error during reset"', async () => {
    const src = `class REnv:\n    def reset(self, seed=None):\n        if seed == 1:\n            return "bare"\n        if seed == 2:\n            return 5\n        if seed == 3:\n            raise RuntimeError("no")\n        return "o", {"k": "text", "v": 2}\n    def step(self, a):\n        return "o", 0.0, False, False, {}\n`;
    const s = await open(src, kind);
    expect((await call(s.sessionId, { cmd: 'reset', seed: 0 })).spade).toEqual({ observation: 'o', info: { v: 2 } });
    expect((await call(s.sessionId, { cmd: 'reset', seed: 1 })).spade).toEqual({ observation: 'bare', info: {} });
    expect((await call(s.sessionId, { cmd: 'reset', seed: 2 })).spade).toEqual({ observation: '5', info: {} });
    const r = await rt.call(s.sessionId, { cmd: 'reset', seed: 3 });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.spade).toEqual({ observation: 'Error during reset. Starting new game.', info: {} });
    const p = await call(s.sessionId, { cmd: 'play', seed: 3, actions: ['x'] });
    expect(p.reset.spade).toEqual({ observation: 'Error during reset. Starting new game.', info: {} });
  });

  test('the played instance is the validated one: state leaking across reset shows in the first episode', async () => {
    const src = `class LeakEnv:\n    seen = []\n    def __init__(self):\n        self.resets = 0\n        self.steps = 0\n    def reset(self, seed=None):\n        self.resets += 1\n        LeakEnv.seen.append(seed)\n        return f"resets={self.resets} steps={self.steps} seen={LeakEnv.seen}", {}\n    def step(self, a):\n        self.steps += 1\n        return "o", 0.0, False, False, {}\n`;
    const s = await open(src, kind);
    expect(s.load.validation).toEqual({ ok: true, message: null, stage: null });
    const first = await call(s.sessionId, { cmd: 'reset', seed: 0 });
    // load ran reset(42), three probe steps and reset(123) on this very instance
    expect(first.observation).toBe('resets=3 steps=3 seen=[42, 123, 0]');
  });

  test('validation stops early when a probe ends the episode', async () => {
    const src = `class EndEnv:\n    def __init__(self):\n        self.actions = []\n    def reset(self, seed=None):\n        return "o", {}\n    def step(self, a):\n        self.actions.append(a)\n        return "o", 0.0, a == "\\\\boxed{test}", False, {}\n`;
    const s = await open(src, kind);
    const fields = Object.fromEntries((await call(s.sessionId, { cmd: 'state' })).fields);
    expect(fields.actions).toMatchObject({ len: 2, items: [{ v: '\\boxed{1}' }, { v: '\\boxed{test}' }] });
  });

  test('validation failures carry SPADE’s exact messages; the game still loads for inspection', async () => {
    const cases: [string, string][] = [
      [`class AEnv:\n    def reset(self, seed=None):\n        return "a", {}, 1\n    def step(self, a):\n        return "o", 0.0, False, False, {}\n`, "Game reset() failed: reset() returned invalid type: <class 'tuple'>"],
      [`class AEnv:\n    def reset(self, seed=None):\n        return ""\n    def step(self, a):\n        return "o", 0.0, False, False, {}\n`, 'Game reset() failed: reset() returned empty or non-string observation'],
      [`class AEnv:\n    def reset(self, seed=None):\n        return "o", []\n    def step(self, a):\n        return "o", 0.0, False, False, {}\n`, "Game reset() failed: reset() info must be dict, got <class 'list'>"],
      [`class AEnv:\n    def reset(self, seed=None):\n        raise KeyError("k")\n    def step(self, a):\n        return "o", 0.0, False, False, {}\n`, "Game reset() failed: 'k'"],
      [`class AEnv:\n    def reset(self, seed=None):\n        return "o", {}\n    def step(self, a):\n        if "test" in a:\n            raise ValueError("bad")\n        return "o", 0.0, False, False, {}\n`, "Game step() failed on action 2 '\\boxed{test}': bad"],
      [`class AEnv:\n    def reset(self, seed=None):\n        return "o", {}\n    def step(self, a):\n        return "o", 0.0, False, False\n`, "Game step() failed on action 1 '\\boxed{1}': step() must return 5-tuple, got <class 'tuple'> with length 4"],
      [`class AEnv:\n    def reset(self, seed=None):\n        return "o", {}\n    def step(self, a):\n        return ["o", 0.0, False, False, {}]\n`, "Game step() failed on action 1 '\\boxed{1}': step() must return 5-tuple, got <class 'list'> with length N/A"],
      [`class AEnv:\n    def reset(self, seed=None):\n        return "o", {}\n    def step(self, a):\n        return "o", "1", False, False, {}\n`, "Game step() failed on action 1 '\\boxed{1}': step() reward must be numeric, got <class 'str'>"],
      [`class AEnv:\n    def reset(self, seed=None):\n        return "o", {}\n    def step(self, a):\n        return "o", 11, False, False, {}\n`, "Game step() failed on action 1 '\\boxed{1}': step() reward 11 outside expected range [-10, 10]"],
      [`class AEnv:\n    def reset(self, seed=None):\n        return "o", {}\n    def step(self, a):\n        return "o", 0.0, 1, False, {}\n`, "Game step() failed on action 1 '\\boxed{1}': step() terminated must be bool, got <class 'int'>"],
      [`class AEnv:\n    def reset(self, seed=None):\n        return "o", {}\n    def step(self, a):\n        return 5, 0.0, False, False, {}\n`, "Game step() failed on action 1 '\\boxed{1}': step() observation must be string, got <class 'int'>"],
      [`class AEnv:\n    def reset(self, seed=None):\n        if seed == 123:\n            raise RuntimeError("again")\n        return "o", {}\n    def step(self, a):\n        return "o", 0.0, False, False, {}\n`, 'Game reset() failed on second call: again'],
    ];
    for (const [src, message] of cases) {
      const s = await open(src, kind);
      expect(s.load.validation, src).toMatchObject({ ok: false, message });
    }
    // NaN and a bool reward pass SPADE's checks
    for (const reward of ['float("nan")', 'True']) {
      const s = await open(`class AEnv:\n    def reset(self, seed=None):\n        return "o", {}\n    def step(self, a):\n        return "o", ${reward}, False, False, {}\n`, kind);
      expect(s.load.validation, reward).toEqual({ ok: true, message: null, stage: null });
    }
  });

  test('load errors are SPADE’s messages, word for word', async () => {
    const cases: [string, string, string][] = [
      ['class XEnv:\n  def reset(self:\n', 'syntax', "Syntax error in generated game code: '(' was never closed (<string>, line 2)"],
      ['raise ValueError("at import")\n', 'exec', 'Failed to execute game code: at import'],
      ['class Game:\n    pass\n', 'no_class', "No valid game class found in code (expected class ending with 'Env')"],
      ['class AEnv:\n    def __init__(self, max_turns):\n        raise TypeError("needs more")\n', 'instantiate', 'Failed to instantiate game class: needs more'],
      ['class AEnv:\n    def step(self, a):\n        pass\n', 'missing_method', 'Game class missing required method: reset'],
      ['class AEnv:\n    def reset(self, seed=None):\n        pass\n', 'missing_method', 'Game class missing required method: step'],
    ];
    for (const [source, stage, message] of cases) {
      const r = await rt.open({ source, runtime: kind });
      expect(r.ok, source).toBe(false);
      if (!r.ok) expect(r.error, source).toMatchObject({ kind: 'load_error', stage, message });
    }
  });

  test('the game runs as SPADE’s module dynamic_game, with tool_use_base_env importable', async () => {
    const src = `import sys\nfrom tool_use_base_env import ToolUseBaseEnv as Base\nassert sys.modules["dynamic_game"].__dict__ is globals()\nassert Base is ToolUseBaseEnv\nclass AEnv:\n    def reset(self, seed=None):\n        return __name__, {}\n    def step(self, a):\n        return type(self).__module__, 0.0, True, False, {}\n`;
    const s = await open(src, kind);
    expect(s.load.validation).toMatchObject({ ok: true });
    expect((await call(s.sessionId, { cmd: 'reset' })).observation).toBe('dynamic_game');
    expect((await call(s.sessionId, { cmd: 'step', action: 'x' })).observation).toBe('dynamic_game');
  });

  test('max_turns: designed positive int capped at the budget, anything else replaced by it; legacy forces it only for Cls()', async () => {
    const game = (init: string) => `class MEnv:\n    def __init__(self):\n${init}\n    def reset(self, seed=None):\n        return "o", {}\n    def step(self, a):\n        return "o", 0.0, False, False, {}\n`;
    const mt = async (init: string, extra: { maxTurns?: number; mode?: 'respect' | 'legacy' } = {}) => (await open(game(init), kind, { maxTurns: 25, ...extra })).load.maxTurns;
    expect(await mt('        self.max_turns = 10')).toBe(10);
    expect(await mt('        self.max_turns = 100')).toBe(25);
    expect(await mt('        self.max_turns = 3.0')).toBe(25);
    expect(await mt('        self.max_turns = 0')).toBe(25);
    expect(await mt('        self.max_turns = None')).toBe(25);
    expect(await mt('        self.max_turns = "5"')).toBe(25);
    // a game without max_turns gets none
    expect(await mt('        self.x = 1')).toBe(null);
    // legacy (pool admission): Cls(max_turns=budget) raises TypeError here, so Cls() and max_turns forced
    expect(await mt('        self.max_turns = 10', { mode: 'legacy' })).toBe(25);
    const kw = `class KEnv:\n    def __init__(self, max_turns=5):\n        self.max_turns = max_turns * 2\n    def reset(self, seed=None):\n        return "o", {}\n    def step(self, a):\n        return "o", 0.0, False, False, {}\n`;
    // legacy with a max_turns keyword: whatever the constructor made of the budget stays
    expect((await open(kw, kind, { maxTurns: 25, mode: 'legacy' })).load.maxTurns).toBe(50);
    expect((await open(kw, kind, { maxTurns: 25 })).load.maxTurns).toBe(10);
  });
});

describe.runIf(probePython()?.numpy)('SPADE mode, numpy games (native CPython)', () => {
  const npGame = (reward: string, term = 'False') =>
    `class NEnv:\n    def reset(self, seed=None):\n        return "o", {}\n    def step(self, a):\n        return "o", ${reward}, ${term}, False, {"x": np.int64(3), "f": np.float32(0.5)}\n`;

  test('numpy.float64 rewards pass SPADE’s validation; numpy.float32, numpy.int64 and numpy.bool_ fail with its messages', async () => {
    expect((await open(npGame('np.float64(0.5)'), 'cpython')).load.validation).toEqual({ ok: true, message: null, stage: null });
    expect((await open(npGame('np.float32(0.5)'), 'cpython')).load.validation).toMatchObject({ ok: false, message: "Game step() failed on action 1 '\\boxed{1}': step() reward must be numeric, got <class 'numpy.float32'>" });
    expect((await open(npGame('np.int64(1)'), 'cpython')).load.validation).toMatchObject({ ok: false, message: "Game step() failed on action 1 '\\boxed{1}': step() reward must be numeric, got <class 'numpy.int64'>" });
    // numpy 2 names the type numpy.bool (numpy 1: numpy.bool_); the message is Python's repr of it either way.
    const boolMsg = (await open(npGame('0.0', 'np.bool_(False)'), 'cpython')).load.validation;
    expect(boolMsg?.ok).toBe(false);
    expect(boolMsg?.message).toMatch(/^Game step\(\) failed on action 1 '\\boxed\{1\}': step\(\) terminated must be bool, got <class 'numpy\.bool_?'>$/);
  });

  test('numpy.bool_(True) ends the episode after SPADE’s conversion; numpy info values go through float()', async () => {
    const s = await open(npGame('np.float32(0.25)', 'np.bool_(True)'), 'cpython');
    const r = await call(s.sessionId, { cmd: 'play', actions: ['a', 'b'] });
    expect(r.steps).toHaveLength(1);
    expect(r.steps[0].types[1]).toBe('numpy.float32');
    expect(r.steps[0].types[2]).toMatch(/^numpy\.bool_?$/);
    expect(r.steps[0].spade).toEqual({ observation: 'o', reward: 0.25, terminated: true, truncated: false, info: { x: 3, f: 0.5 } });
  });

  test('a game that ignores its seed draws numpy’s process-global stream: no pre-seeding', async () => {
    const src = `class NEnv:\n    def reset(self, seed=None):\n        return str(np.random.randint(0, 10**9)), {}\n    def step(self, a):\n        return "o", 0.0, True, False, {}\n`;
    const s = await open(src, 'cpython');
    const a = await call(s.sessionId, { cmd: 'reset', seed: 1 });
    const b = await call(s.sessionId, { cmd: 'reset', seed: 1 });
    expect(b.observation).not.toBe(a.observation);
    expect(a.seedIgnored).toBe(true);
    const seeding = await open(src.replace('return str(', 'np.random.seed(seed)\n        return str('), 'cpython');
    const c = await call(seeding.sessionId, { cmd: 'reset', seed: 1 });
    const d = await call(seeding.sessionId, { cmd: 'reset', seed: 1 });
    expect(d.observation).toBe(c.observation);
    expect(c.seeded).toEqual(['numpy.random.seed']);
  });
});
