import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { probePython } from '../../core/runtime/native';
import { packageRoot } from '../../core/base/appInfo';

/** The harness's pure parts, run by a plain python3 (no sandbox, no Pyodide): fast and exact. */
function py(code: string): unknown {
  const python = probePython();
  if (!python) throw new Error('no python3');
  const r = spawnSync(python.path, ['-c', `import sys, json\nsys.path.insert(0, ${JSON.stringify(join(packageRoot(), 'native'))})\nimport harness\n${code}`], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

test.runIf(probePython())('answer matching (SPADE’s _check_answer): case-insensitive, or numeric strictly within 0.01 after $ and , are stripped; overridable', () => {
  const out = py(String.raw`
class T(harness.ToolUseBaseEnv):
    def reset(self, seed=None):
        self._expected_answer = "1234.5"
        return "o", {}
class Exact(T):
    def _check_answer(self, answer):
        return answer == "exactly"
e = T()
f = T()
f._expected_answer = "1.25"
z = T()
z._expected_answer = "0"
print(json.dumps([e._check_answer(a) for a in ["1234.5", "$1,234.50", "1234.509", "1234.51", "1234.52"]] + [f._check_answer("1.26"), z._check_answer("0.01"), z._check_answer("$0.00999"), e.step("<answer>exactly</answer>")[0], Exact().step("<answer>exactly</answer>")[0]]))`);
  // float arithmetic as SPADE's: 1234.51 - 1234.5 is 0.00999..., so it matches; 1.26 vs 1.25 (0.0100...01) does not
  // and |0.01 - 0| is exactly 0.01: not < 0.01 (the old workbench base class accepted it with <=)
  expect(out).toEqual([true, true, true, true, false, false, false, true, 'Incorrect. Keep using tools.', 'Correct!']);
});

test.runIf(probePython())('ToolUseBaseEnv is SPADE’s: one tool call per step, no XML form, no _advance_if_done, texts at the turn limit', () => {
  const out = py(String.raw`
class T(harness.ToolUseBaseEnv):
    def reset(self, seed=None):
        self.turn_count = 0
        self._tools = {"set": {"description": "set k", "parameters": {"type": "object", "properties": {"k": {"type": "string"}}}}}
        self._state = {"k": None}
        self._expected_answer = "done"
        self._user_messages = ["set k to a", "set k to b"]
        self._current_msg = 0
        return self._user_messages[0], {}
    def solution(self):
        return "done"
    def tool_set(self, k):
        self._state["k"] = k
        return "ok"
    def tool_boom(self):
        raise ValueError("no")
e = T(max_turns=4)
e.reset(0)
r1 = e.step("<function=set><parameter=k>a</parameter></function>")
r2 = e.step('<tool_call>{"name": "set", "arguments": {"k": "b"}}</tool_call>')
r3 = e.step('<tool_call>{"name": "boom", "arguments": {}}</tool_call>')
r4 = e.step("<answer>nope</answer>")
f = T(max_turns=9)
both = f.step('<tool_call>{"name": "set", "arguments": {"k": "z"}}</tool_call> <answer>done</answer>')
print(json.dumps({"r1": r1, "r2": r2, "r3": r3[0], "r4": r4, "both": [both[0], f._state["k"]], "history": e._call_history, "advance": hasattr(e, "_advance_if_done"), "suffix": e._obs_suffix(), "tools": e.get_tools()[0]["function"]["name"]}))
`) as Record<string, unknown>;
  expect(out.r1).toEqual(['Format error: use tools to call a function, or <answer>result</answer> to submit.', -0.1, false, false, {}]);
  expect(out.r2).toEqual(['Tool result:\nok', 0, false, false, {}]);
  expect(out.r3).toBe('Tool result:\nError calling boom: no');
  // the fourth turn of four: a wrong answer ends the episode, truncated, with the solution
  expect(out.r4).toEqual(['Wrong answer. Solution:\ndone', 0, false, true, {}]);
  expect(out.history).toEqual([{ name: 'set', arguments: { k: 'b' }, result: 'ok' }]);
  // an <answer> wins over a tool call in the same text: the tool is never called
  expect(out.both).toEqual(['Correct!', null]);
  expect(out.advance).toBe(false);
  expect(out.suffix).toBe('');
  expect(out.tools).toBe('set');
});

test.runIf(probePython())('wrong answers in a multi-turn game name the pending step', () => {
  const out = py(String.raw`
class T(harness.ToolUseBaseEnv):
    def reset(self, seed=None):
        self._expected_answer = "done"
        self._user_messages = ["first", "second"]
        self._current_msg = 1
        return "o", {}
print(json.dumps(T().step("<answer>x</answer>")[0]))`);
  expect(out).toBe('Incorrect. Keep using tools. Not all steps are complete \u2014 you are still on step 2/2: "second" Complete this step with the tools before submitting <answer>done</answer>.');
});

test.runIf(probePython())('values: non-finite floats, huge ints, cycles and long strings stay JSON-safe and bounded', () => {
  const out = py(String.raw`
a = []
a.append(a)
class O: pass
o = O(); o.me = o; o.s = "y" * 1000
print(json.dumps({
  "plain": harness.plain([float("nan"), float("inf"), 2**80, (1, 2), {"k": {1, 2}}]),
  "cycle": harness.describe(a),
  "obj": harness.describe(o),
  "repr": harness.repr_safe(O()),
}))`) as { plain: unknown[]; cycle: { items: { v: string }[] }; obj: { fields: [string, { v: string }][] }; repr: string };
  expect(out.plain).toEqual(['NaN', 'Infinity', '1208925819614629174706176', [1, 2], { k: [1, 2] }]);
  expect(out.cycle.items[0]!.v).toBe('<cycle>');
  const fields = Object.fromEntries(out.obj.fields);
  expect(fields.me!.v).toBe('<cycle>');
  expect(fields.s!.v).toMatch(/\[\+700 chars\]$/);
  expect(out.repr).not.toMatch(/0x[0-9a-f]+/);
});

test.runIf(probePython())('output capture keeps the first 64 KiB and says how much was cut', () => {
  const out = py(`c = harness.CappedOutput(100)\nfor i in range(50):\n    c.write("0123456789")\nt = c.take()\nprint(json.dumps([len(t), t[-40:], c.take()]))`) as [number, string, string];
  expect(out[1]).toContain('400 more chars');
  expect(out[2]).toBe('');
});

test.runIf(probePython())('a player skips get_tools() only for a game that certainly has none, found without running game code', () => {
  const out = py(String.raw`
calls = []
class Plain:
    def reset(self, seed=None): return "o", {}
class Tools(harness.ToolUseBaseEnv):
    def reset(self, seed=None): return "o", {}
class Own:
    def get_tools(self): return [{"name": "x"}]
class Later:
    def __init__(self): self.get_tools = lambda: []
class Dynamic:
    def __getattr__(self, name):
        calls.append(name)
        raise AttributeError(name)
class Hidden:
    def __getattribute__(self, name):
        calls.append(name)
        return object.__getattribute__(self, name)
print(json.dumps([harness._may_have_tools(c()) for c in (Plain, Tools, Own, Later, Dynamic, Hidden)] + [calls]))`);
  expect(out).toEqual([false, true, true, true, true, true, []]);
});

test.runIf(probePython())('an audit sequence answers each operation as if asked alone, stops at the first failure, and plays when/unless items by an earlier True', () => {
  const out = py(String.raw`
import audit_exec
h = harness.Harness()
audit_exec.install(h, harness)
src = '''
class SeqEnv:
    def reset(self, seed=None):
        if seed == 9:
            raise ValueError("nine")
        self.seed = seed
        return "seed %s" % seed, {}
    def step(self, action):
        return "o", 0.0, True, False, {}
    def solution(self):
        return self.seed + 1
'''
def x(op, **kw):
    return json.loads(h.dispatch(json.dumps({"cmd": "x", "op": op, "id": 1, **kw})))["result"]
x("start", source=src)
x("compile"); x("exec", limit=5); x("class")
e = x("fresh", mode="respect", budget=30, limit=5)["v"]
def strip(r):
    return None if r is None else {k: v for k, v in r.items() if k != "ns"}
alone = [strip(x("reset", env=e, seed=3, limit=5)), strip(x("has_solution", env=e)), strip(x("solution", env=e, limit=5))]
got = x("seq", items=[{"op": "reset", "env": e, "seed": 3, "limit": 5}, {"op": "has_solution", "env": e}, {"op": "solution", "env": e, "limit": 5, "when": 1},
                      {"op": "attr", "env": e, "name": "seed", "unless": 1}, {"op": "reset", "env": e, "seed": 9, "limit": 5}, {"op": "reset", "env": e, "seed": 4, "limit": 5}])["items"]
refused = json.loads(h.dispatch(json.dumps({"cmd": "x", "op": "seq", "id": 2, "items": [{"op": "admission", "limit": 5}]})))
print(json.dumps([alone, [strip(r) for r in got[:3]], got[3], got[4]["raise"]["type"], len(got), refused["ok"]]))`);
  const [alone, seq, skipped, raised, n, ok] = out as [unknown[], unknown[], unknown, string, number, boolean];
  expect(seq).toEqual(alone);
  expect(skipped).toBeNull();
  expect(raised).toBe('ValueError');
  expect(n).toBe(5); // the reset after the one that raised was not played
  expect(ok).toBe(false); // loading stages are never sequenced
});

test.runIf(probePython())('the call alarm: one system call for a run of short calls, and a call past its limit is interrupted at it whatever was set before', () => {
  const out = py(String.raw`
import signal, time
calls = []
real = harness.call_alarm.__globals__["_setitimer"]
def counting(which, secs):
    calls.append(secs)
    return real(which, secs)
harness.call_alarm.__globals__["_setitimer"] = counting
a = harness.call_alarm(harness.CallTimeout)
for _ in range(200):
    a.arm(5.0); a.disarm()
short_runs = len(calls)
def spin(limit, secs):
    a.arm(limit)
    t = time.perf_counter()
    try:
        while time.perf_counter() - t < secs:
            pass
        return ["returned", time.perf_counter() - t]
    except harness.CallTimeout:
        return ["interrupted", time.perf_counter() - t]
    finally:
        a.disarm()
# the alarm pending is set for 5 s: a call with a 0.3 s limit must still end at 0.3 s
hung = spin(0.3, 3)
# set for 0.2 s by a call that returned: it rings early, during a call allowed 1 s, which goes on
a.arm(0.2); a.disarm()
long_ok = spin(1.0, 0.6)
# a ring between calls interrupts nothing
a.arm(0.1); a.disarm(); time.sleep(0.3)
idle = "ok"
print(json.dumps([short_runs, hung, long_ok, idle]))`) as [number, [string, number], [string, number], string];
  expect(out[0]).toBe(1);
  // never before its limit; the bound above only says it was not left to run its 3 s
  expect(out[1][0]).toBe('interrupted');
  expect(out[1][1]).toBeGreaterThanOrEqual(0.3);
  expect(out[1][1]).toBeLessThan(2);
  expect(out[2][0]).toBe('returned');
  expect(out[3]).toBe('ok');
});
