import { afterAll, describe, expect, it } from 'vitest';
import { AuditPool } from '../../../core/audit/pool';
import { PyodideAuditRunner } from '../../../core/audit/pyodideRunner';
import { reportEnv } from '../../../core/audit/report';
import { spadeAccepts, type AuditOptions, type EnvAudit } from '../../../core/audit/types';
import { probePython } from '../../../core/runtime/native';
import { PyodidePool } from '../../../core/runtime/pyodidePool';
import { ensureChildBuilt } from '../runtime/helpers';

/**
 * SPADE's verdict comes from SPADE's checks alone (section 5, checked against SPADE's code): what
 * SPADE accepts (numpy.float64 and NaN rewards, a slow reset inside its 30 s) is accepted even when
 * the workbench's own stricter checks fail; what SPADE rejects (numpy.int64, a close() that raises at
 * pool admission) is rejected with SPADE's words. Native CPython and the Pyodide sandbox alike.
 */
ensureChildBuilt();
const native = new AuditPool({ workers: 1, envTimeoutSec: 60 });
const pyodide = new PyodidePool({ size: 1, graceMs: 2000 });
const sandboxed = new PyodideAuditRunner(() => pyodide, 60_000);
afterAll(async () => {
  await native.close();
  await pyodide.shutdown();
});

const check = (a: EnvAudit, id: string) => {
  const c = a.checks.find((x) => x.id === id);
  if (!c) throw new Error(`no ${id} in ${a.checks.map((x) => x.id).join(',')}`);
  return c;
};

const game = (step: string, extra = '') =>
  `class VEnv:\n    def reset(self, seed=None):\n        if seed is not None:\n            random.seed(seed)\n        self.t = random.randint(1, 9)\n        self.n = 0\n        return "guess", {}\n    def step(self, a):\n        self.n += 1\n${step}\n${extra}`;

type Run = (source: string, o?: AuditOptions) => Promise<EnvAudit>;
const runners: [string, Run][] = [['pyodide', (s, o = {}) => sandboxed.audit(s, o)]];
if (probePython()) runners.push(['cpython', (s, o = {}) => native.audit(s, o)]);

describe.each(runners)('SPADE verdict in %s', (_kind, audit) => {
  it('a NaN reward passes SPADE’s checks; the workbench’s own types check fails apart from that verdict', async () => {
    const a = await audit(game('        return "no", float("nan"), self.n >= 3, False, {}'), { callTimeoutSec: 5 });
    expect(check(a, 'spade.step').status).toBe('pass');
    expect(check(a, 'spade.admission').status).toBe('pass');
    expect(spadeAccepts(a.checks)).toBe(true);
    expect(check(a, 'types').status).toBe('fail');
    const r = reportEnv('v.py', '0'.repeat(64), 'v', a);
    expect(r.spade).toEqual({ verdict: 'accept', message: null, check: null });
    expect(r.verdict).toBe('fail');
    expect(r.workbenchVerdict).toBe('fail');
  });

  it('a close() that raises fails pool admission (legacy load, budget 1000), in SPADE’s words', async () => {
    const a = await audit(game('        return "no", 0.0, self.n >= 3, False, {}', '    def close(self):\n        raise RuntimeError("cannot close")\n'));
    for (const id of ['spade.reset', 'spade.step', 'spade.reset2']) expect(check(a, id).status).toBe('pass');
    expect(check(a, 'spade.admission')).toMatchObject({ status: 'fail', message: 'Game validation failed: cannot close' });
    expect(spadeAccepts(a.checks)).toBe(false);
    expect(reportEnv('v.py', '0'.repeat(64), 'v', a).spade).toEqual({ verdict: 'reject', message: 'Game validation failed: cannot close', check: 'spade.admission' });
  });

  it('pool admission loads in legacy mode: Cls(max_turns=1000) first', async () => {
    const src = `class LEnv:\n    def __init__(self, max_turns=10):\n        if max_turns > 100:\n            raise ValueError("at most 100 turns")\n        self.max_turns = max_turns\n    def reset(self, seed=None):\n        return "o", {}\n    def step(self, a):\n        return "o", 0.0, True, False, {}\n`;
    const a = await audit(src);
    expect(check(a, 'spade.instantiate').status).toBe('pass');
    expect(check(a, 'spade.admission')).toMatchObject({ status: 'fail', message: 'Game validation failed: Failed to instantiate game class: at most 100 turns' });
  });

  it('pool admission has its own limit for the whole of it (SPADE: 60 s; lowered here)', async () => {
    const a = await audit(game('        return "no", 0.0, self.n >= 3, False, {}', '    def close(self):\n        while True:\n            pass\n'), { spadeAdmissionTimeoutSec: 2 });
    expect(check(a, 'spade.reset2').status).toBe('pass');
    expect(check(a, 'spade.admission')).toMatchObject({ status: 'fail', message: 'validate_game timed out after 2s' });
    expect(spadeAccepts(a.checks)).toBe(false);
  });

  it('a probe step that hangs fails as SPADE’s alarm makes it fail', async () => {
    const a = await audit(game('        while "test" in a:\n            pass\n        return "no", 0.0, False, False, {}'), { spadeCallTimeoutSec: 1 });
    expect(check(a, 'spade.step')).toMatchObject({ status: 'fail', message: "Game step() failed on action 2 '\\boxed{test}': env call timed out after 1s" });
  });

  it('admission swallows step errors as SPADE’s wrapper does (raw actions "1", "2", "test")', async () => {
    const a = await audit(game('        if a == "2":\n            raise KeyError("two")\n        return "no", 0.0, False, False, {}'));
    expect(check(a, 'spade.admission').status).toBe('pass');
  });

  it('SPADE’s checks get SPADE’s 30 s per call, not the workbench’s 1 s', async () => {
    const src = `import time\nclass SlowEnv:\n    def reset(self, seed=None):\n        if seed == 42:\n            time.sleep(2)\n        return "o", {}\n    def step(self, a):\n        return "o", 0.0, True, False, {}\n`;
    const a = await audit(src, { callTimeoutSec: 1 });
    expect(check(a, 'spade.reset').status).toBe('pass');
    expect(spadeAccepts(a.checks)).toBe(true);
  });

  it('a clean tool-use game (own reset, no base reset) leaks nothing; tool_use_base_env imports', async () => {
    const src = String.raw`from tool_use_base_env import ToolUseBaseEnv
class PriceEnv(ToolUseBaseEnv):
    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn_count = 0
        self._tools = {"price": {"description": "price", "parameters": {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}}}
        self._state = {"apple": random.randint(1, 9)}
        self._expected_answer = str(self._state["apple"])
        return "What does an apple cost?", {}
    def solution(self):
        return ['<tool_call>{"name": "price", "arguments": {"item": "apple"}}</tool_call>', "<answer>" + self._expected_answer + "</answer>"]
    def tool_price(self, item):
        return str(self._state[item])
`;
    const a = await audit(src);
    expect(spadeAccepts(a.checks)).toBe(true);
    expect(check(a, 'reset-leak')).toMatchObject({ status: 'pass' });
    expect(check(a, 'tool.done_reachable').status).toBe('pass');
  });
});

describe.each(runners)('tool-use play checks follow SPADE’s rollout in %s', (_kind, audit) => {
  it('parsed tool calls go to execute_tool, never to step: a step that only takes answers is still winnable', async () => {
    const src = String.raw`class AnswerOnlyEnv(ToolUseBaseEnv):
    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn_count = 0
        self._tools = {"peek": {"description": "the secret", "parameters": {"type": "object", "properties": {}}}}
        self._secret = str(random.randint(100, 999))
        self._expected_answer = None
        return "Find the secret with the tool, then answer.", {}
    def tool_peek(self):
        self._expected_answer = self._secret
        return self._secret
    def solution(self):
        return ['<tool_call>{"name": "peek", "arguments": {}}</tool_call>', "<answer>" + self._secret + "</answer>"]
    def step(self, action):
        self.turn_count += 1
        m = re.search(r"<answer>(.*?)</answer>", action)
        if m and self._expected_answer is not None and m.group(1).strip() == self._expected_answer:
            return "Correct!", 1.0, True, False, {}
        return "Use the tool first, then answer.", 0.0, False, self.turn_count >= self.max_turns, {}
`;
    const a = await audit(src);
    expect(check(a, 'tool.done_reachable')).toMatchObject({ status: 'pass' });
  });

  it('a tool named by a JSON value that is not a string reaches execute_tool as SPADE passes it (NaN looks up tool_nan)', async () => {
    // SPADE's parser hands json.loads' value to execute_tool, whose f"tool_{name}" spells nan,
    // True and None as Python does: the game is winnable through those names.
    const src = String.raw`class OddNamesEnv(ToolUseBaseEnv):
    def reset(self, seed=None):
        self.turn_count = 0
        self._tools = {"nan": {"description": "one", "parameters": {"type": "object", "properties": {}}}}
        self._got = []
        self._expected_answer = None
        return "Call the tools, then answer.", {}
    def tool_nan(self):
        self._got.append("nan")
        return "ok"
    def tool_True(self):
        self._got.append("True")
        return "ok"
    def tool_None(self):
        if self._got == ["nan", "True"]:
            self._expected_answer = "done"
        return "ok"
    def solution(self):
        return ['<tool_call>{"name": NaN, "arguments": {}}</tool_call> <tool_call>{"name": true, "arguments": {}}</tool_call>', '<tool_call>{"name": null}</tool_call>', "<answer>done</answer>"]
`;
    const a = await audit(src);
    expect(check(a, 'tool.done_reachable')).toMatchObject({ status: 'pass' });
    expect(spadeAccepts(a.checks)).toBe(true);
  });
});

describe.runIf(probePython()?.numpy)('SPADE verdict, numpy rewards (native CPython)', () => {
  it('numpy.float64 passes SPADE (a float subclass); numpy.int64 fails it with SPADE’s message', async () => {
    const f64 = await native.audit(`import numpy as np\n${game('        return "no", np.float64(0.0), self.n >= 3, False, {}')}`);
    expect(check(f64, 'spade.step').status).toBe('pass');
    expect(spadeAccepts(f64.checks)).toBe(true);
    expect(check(f64, 'types').status).toBe('fail');
    const i64 = await native.audit(`import numpy as np\n${game('        return "no", np.int64(0), self.n >= 3, False, {}')}`);
    expect(check(i64, 'spade.step')).toMatchObject({ status: 'fail', message: "Game step() failed on action 1 '\\boxed{1}': step() reward must be numeric, got <class 'numpy.int64'>" });
  });
});
