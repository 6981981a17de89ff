import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { probePython } from '../../core/runtime/native';
import { packageRoot } from '../../core/services/appInfo';

/** The harness's pure parts, run by a plain python3 (no sandbox, no Pyodide): fast and exact. */
function py(code: string): unknown {
  const python = probePython();
  if (!python) throw new Error('no python3');
  const r = spawnSync(python.path, ['-c', `import sys, json\nsys.path.insert(0, ${JSON.stringify(join(packageRoot(), 'native'))})\nimport harness\n${code}`], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

test.runIf(probePython())('answer matching: case-insensitive, or numeric within 0.01 after $ and , are stripped', () => {
  expect(py(`print(json.dumps([harness._answers_match(a, b) for a, b in [("Paris", "paris"), ("$1,234.50", "1234.5"), ("1234.505", "1234.5"), ("1234.6", "1234.5"), ("x", "y")]]))`)).toEqual([true, true, true, false, false]);
});

test.runIf(probePython())('ToolUseBaseEnv: XML tool form, turn limit reveals the answer, multi-turn criteria advance', () => {
  const out = py(String.raw`
class T(harness.ToolUseBaseEnv):
    def reset(self, seed=None):
        super().reset(seed)
        self._tools = {"set": {"description": "set k", "parameters": {"type": "object", "properties": {"k": {"type": "string"}}}}}
        self._state = {"k": None}
        self._expected_answer = "done"
        self._user_messages = ["set k to a", "set k to b"]
        self._message_criteria = [lambda s: s["k"] == "a", lambda s: s["k"] == "b"]
        return self._user_messages[0], {}
    def tool_set(self, k):
        self._state["k"] = k
        return "ok" + self._advance_if_done()
e = T(max_turns=2)
e.reset(0)
r1 = e.step("<function=set><parameter=k>a</parameter></function>")
r2 = e.step('<tool_call>{"name": "set", "arguments": {"k": "b"}}</tool_call>')
r3 = e.step("<answer>nope</answer>")
r4 = e.step("<answer>still no</answer>")
print(json.dumps({"r1": r1[0], "r2": r2[0], "r3": r3[1:4], "r4": [r4[0], r4[3]], "tools": e.get_tools()[0]["function"]["name"], "turns": e.turn_count}))
`) as { r1: string; r2: string; r3: unknown[]; r4: [string, boolean]; tools: string; turns: number };
  expect(out.r1).toContain('set k to b');
  expect(out.r2).toContain('<answer>done</answer>');
  expect(out.r3).toEqual([0, false, false]);
  expect(out.r4[1]).toBe(true);
  expect(out.r4[0]).toContain('expected answer was: done');
  expect(out.tools).toBe('set');
  expect(out.turns).toBe(2);
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
