import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { callNesting, parseToolCalls } from '../../../core/models/toolCalls';
import { probePython } from '../../../core/runtime/native';
import { harnessReplySchema, harnessResultSchemas, playResultSchema } from '../../../core/runtime/harnessMessages';
import { GENERATED_PYTHON } from '../../../core/runtime/pythonContract';
import type { HarnessRequest } from '../../../core/runtime/protocol';
import type { RuntimeKind, RuntimeService } from '../../../core/runtime/service';
import { makeRuntime } from './helpers';

/**
 * One contract between the host and the harness: the Python side is generated from the TypeScript
 * (a stale file fails here), every real reply of both runtimes fits the strict schemas (a key added,
 * renamed or retyped in Python alone fails here), and both sides read tool calls the same way.
 */

describe('generated Python', () => {
  it.each(Object.keys(GENERATED_PYTHON))('%s is up to date (node scripts/gen-python-contract.mjs)', (rel) => {
    expect(readFileSync(join(process.cwd(), rel), 'utf8')).toBe(GENERATED_PYTHON[rel]!());
  });
});

const TOOL_GAME = String.raw`"""SPADE self-play generated game"""
class CalcEnv(ToolUseBaseEnv):
    def __init__(self, max_turns=6):
        super().__init__(max_turns=max_turns)

    def reset(self, seed=None):
        self.turn_count = 0
        self._tools = {"add": {"description": "a + b", "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}}}
        self._expected_answer = "5"
        return "Add 2 and 3 with the tool, then answer.", {"ready": True}

    def tool_add(self, a, b):
        return a + b
`;

const PLAIN_GAME = String.raw`"""SPADE self-play generated game"""
import re

class FlagEnv:
    def __init__(self, max_turns=5):
        self.max_turns = max_turns

    def reset(self, seed=None):
        self.n = 0
        return "Say \\boxed{7}", {"seed": seed}

    def solution(self):
        return "7"

    def step(self, action):
        self.n += 1
        if "crash" in action:
            raise ValueError("crashed on purpose")
        m = re.search(r"\\boxed\{([^}]*)\}", action)
        ok = bool(m) and m.group(1) == "7"
        return ("Right" if ok else "Wrong"), (1 if ok else 0.0), ok, False, {"correct": ok, "n": self.n, "none": None, "s": "x", "nan": float("nan")}
`;

let rt: RuntimeService;
const runtimes: RuntimeKind[] = probePython() ? ['pyodide', 'cpython'] : ['pyodide'];
beforeAll(() => {
  rt = makeRuntime();
});
afterAll(async () => {
  await rt.shutdown();
});

/** Parses a reply envelope strictly, then its result with the command's strict schema. */
async function check<S extends z.ZodType>(sid: string, req: HarnessRequest, schema: S): Promise<z.infer<S>> {
  const reply = harnessReplySchema.parse(await rt.call(sid, req));
  if (!reply.ok) throw new Error(`${req.cmd} failed: ${JSON.stringify(reply.error)}`);
  return schema.parse(reply.result);
}

describe.each(runtimes)('every harness reply fits its schema (%s)', (runtime) => {
  it('plain game: load, reset, step, play, solution, state, snapshot, restore, tools, close', async () => {
    const opened = await rt.open({ source: PLAIN_GAME, runtime });
    if (!opened.ok) throw new Error(JSON.stringify(opened.error));
    harnessResultSchemas.load.parse(opened.load);
    const sid = opened.sessionId;
    const reset = await check(sid, { cmd: 'reset', seed: 3 }, harnessResultSchemas.reset);
    expect(reset.spade.info).toEqual({ seed: 3 });
    const step = await check(sid, { cmd: 'step', action: '\\boxed{7}' }, harnessResultSchemas.step);
    expect(step.spade.info).toEqual({ correct: true, n: 1, none: null, nan: 'NaN' });
    const play = await check(sid, { cmd: 'play', actions: ['\\boxed{1}', 'crash'], seed: 1, state: true }, playResultSchema);
    expect(play.steps).toHaveLength(2);
    await check(sid, { cmd: 'solution' }, harnessResultSchemas.solution);
    const snap = await check(sid, { cmd: 'snapshot' }, harnessResultSchemas.snapshot);
    await check(sid, { cmd: 'restore', token: snap.token }, harnessResultSchemas.restore);
    await check(sid, { cmd: 'get_tools' }, harnessResultSchemas.get_tools);
    // A step that raises: a failed reply whose error carries SPADE's view.
    const failed = harnessReplySchema.parse(await rt.call(sid, { cmd: 'step', action: 'crash' }));
    expect(failed.ok).toBe(false);
    if (!failed.ok) expect(failed.error.spade).toMatchObject({ reward: -1, terminated: true, error: 'exception' });
    await check(sid, { cmd: 'close' }, harnessResultSchemas.close);
    const syntax = harnessReplySchema.parse(await rt.command(runtime, { cmd: 'check_syntax', source: 'def f(:\n' }));
    if (syntax.ok) harnessResultSchemas.check_syntax.parse(syntax.result);
    else throw new Error('check_syntax failed');
  });

  it('tool-use game: get_tools and tool', async () => {
    const opened = await rt.open({ source: TOOL_GAME, runtime });
    if (!opened.ok) throw new Error(JSON.stringify(opened.error));
    const sid = opened.sessionId;
    await check(sid, { cmd: 'reset', seed: null }, harnessResultSchemas.reset);
    const tools = await check(sid, { cmd: 'get_tools' }, harnessResultSchemas.get_tools);
    expect(tools).toHaveLength(1);
    const out = await check(sid, { cmd: 'tool', name: 'add', arguments: { a: 2, b: 3 } }, harnessResultSchemas.tool);
    expect(out).toEqual({ output: '5', returncode: 0 });
    // A call's block is read in the interpreter as SPADE reads it: 1.0 stays a float, big integers whole.
    const fromBlock = await check(sid, { cmd: 'tool', block: '{"name": "add", "arguments": {"a": 1.0, "b": 12345678901234567890}}' }, harnessResultSchemas.tool);
    expect(fromBlock).toEqual({ output: '1.2345678901234567e+19', returncode: 0 });
    const xml = await check(sid, { cmd: 'tool', block: '<function=add><parameter=a>2</parameter><parameter=b>0.5</parameter></function>' }, harnessResultSchemas.tool);
    expect(xml).toEqual({ output: '2.5', returncode: 0 });
    // A block SPADE's parser does not read is the host's mistake: a protocol error, the game never called.
    const notACall = await rt.call(sid, { cmd: 'tool', block: '{not json' });
    expect(notACall).toMatchObject({ ok: false, error: { kind: 'protocol' } });
    // Arguments that are JSON but not an object reach execute_tool as they are, as SPADE's rollout
    // passes them (core/models/toolCalls.ts): its `method(**arguments)` fails the call.
    for (const [args, type] of [[[2, 3], 'list'], [null, 'NoneType'], [7, 'int']] as const) {
      const bad = await check(sid, { cmd: 'tool', name: 'add', arguments: args }, harnessResultSchemas.tool);
      expect(bad.returncode).toBe(1);
      expect(bad.output).toMatch(new RegExp(`^Error calling add: .*argument after \\*\\* must be a mapping, not ${type}$`));
    }
    await check(sid, { cmd: 'close' }, harnessResultSchemas.close);
  });
});

/** Agent replies that exercise every branch of SPADE's tool-call parser. */
const CORPUS = [
  'no tags at all',
  '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>',
  '<tool_call>\n{"name": "add", "arguments": {"a": 2}}\n</tool_call> and <tool_call>{"name": "sub", "arguments": {}}</tool_call>',
  '<tool_call>{"name": "nest", "arguments": {"a": {"b": 1}}}</tool_call>',
  '<tool_call>{"arguments": {"a": 1}, "name": "swapped"}</tool_call>',
  '<tool_call>{"name": "p", "parameters": {"x": 1}}</tool_call>',
  '<tool_call>{"name": "s", "arguments": "{\\"x\\": 2}"}</tool_call>',
  '<tool_call>{"name": "bad", "arguments": "not json"}</tool_call>',
  '<tool_call>{not json</tool_call>',
  '<tool_call><function=lookup><parameter=city>Paris</parameter><parameter=n>5</parameter></function></tool_call>',
  '<tool_call><function=esc><parameter=q> a &lt; b &amp;&amp; &quot;c&quot; </parameter><parameter=flag>true</parameter></function></tool_call>',
  '<tool_call><function=nothing></function></tool_call>',
  '<tool_call><function=ünïcode_1><parameter=é>[1, 2]</parameter></function></tool_call>',
  '<tool_call>{"name": "x-y", "arguments": {}}</tool_call>',
  '<tool_call>{"name": "nan", "arguments": {"v": NaN, "w": [Infinity, -Infinity], "s": "NaN"}}</tool_call>',
  '<tool_call><function=f><parameter=x>-Infinity</parameter><parameter=y>"NaN"</parameter><parameter=z>NaN</parameter></function></tool_call>',
  'thinking... <tool_call>{"name": "end", "arguments": {"k": "v"}}</tool_call><|im_end|>',
  '<tool_call>{"name": "unclosed", "arguments": {}}',
  '<answer>5</answer> <tool_call>{"name": "add", "arguments": {}}</tool_call>',
  // JSON that is not an object where the arguments go: SPADE passes it to execute_tool as it is.
  '<tool_call>{"name": "add", "arguments": [2, 3]}</tool_call>',
  '<tool_call>{"name": "add", "arguments": "[2, 3]"}</tool_call>',
  '<tool_call>{"name": "add", "arguments": 5}</tool_call>',
  '<tool_call>{"name": "add", "arguments": "7"}</tool_call>',
  '<tool_call>{"name": "add", "arguments": "\\"x\\""}</tool_call>',
  '<tool_call>{"name": "add", "arguments": null}</tool_call>',
  '<tool_call>{"name": "add", "arguments": "null"}</tool_call>',
  '<tool_call>{"name": "add", "arguments": true}</tool_call>',
  '<tool_call>{"name": "add", "arguments": -1.5e3}</tool_call>',
  '<tool_call>{"name": "p", "parameters": ["a", {"b": 1}]}</tool_call>',
  '<tool_call>{"name": "p", "arguments": null, "parameters": {"a": 1}}</tool_call>',
  '<tool_call>{"name": "p"}</tool_call>',
  '<tool_call>[{"name": "in_list", "arguments": {}}]</tool_call>',
  '<tool_call>[1, 2]</tool_call>',
  '<tool_call>"just a string"</tool_call>',
  '<tool_call>42</tool_call>',
  // A name that is not a string: only a JSON block read whole can carry one (the XML form and SPADE's
  // JSON pattern take \w+ names). SPADE passes the value to execute_tool, which looks up
  // f"tool_{name}": the name is Python's str() of it, not JavaScript's String().
  '<tool_call>{"name": true, "arguments": {"a": 1}}</tool_call>',
  '<tool_call>{"name": false}</tool_call>',
  '<tool_call>{"name": null, "arguments": {}}</tool_call>',
  '<tool_call>{"name": 1.0, "arguments": {}}</tool_call> <tool_call>{"name": 1}</tool_call> <tool_call>{"name": -0}</tool_call> <tool_call>{"name": -0.0}</tool_call>',
  '<tool_call>{"name": 1e16}</tool_call><tool_call>{"name": 1e15}</tool_call><tool_call>{"name": 123456789.125e-20}</tool_call><tool_call>{"name": 0.0001}</tool_call><tool_call>{"name": 1E5}</tool_call>',
  '<tool_call>{"name": 1E400}</tool_call><tool_call>{"name": NaN}</tool_call><tool_call>{"name": -Infinity}</tool_call><tool_call>{"name": 5e-324}</tool_call>',
  '<tool_call>{"name": 12345678901234567890123, "arguments": {}}</tool_call>',
  '<tool_call>{"name": [1, "a", null, true, 2.5, {"k": "it\'s"}], "arguments": {}}</tool_call>',
  '<tool_call>{"name": {"b": 1, "1": 2, "b": 3}}</tool_call>',
  '<tool_call>{"name": ["a\\"b", "q\'\\"", "\\u00e9\\u00a0\\u0007\\u007f\\u00ad\\u2028 \\t\\\\", "\\ud83d\\ude00", "\\ud800"]}</tool_call>',
  '<tool_call>{"name": 1, "arguments": {"name": "inner", "arguments": {}}}</tool_call>',
  // Python refuses an integer of more than 4,300 digits (ValueError), where JSON.parse reads it.
  `<tool_call>{"name": ${'7'.repeat(4300)}}</tool_call>`,
  `<tool_call>{"name": ${'7'.repeat(4301)}}</tool_call>`,
  `<tool_call>{"name": "n", "arguments": {"n": -${'7'.repeat(4301)}}}</tool_call>`,
  `<tool_call><function=f><parameter=n>${'7'.repeat(4301)}</parameter><parameter=m>${'7'.repeat(4301)}.5</parameter></function></tool_call>`,
  // A parameter named __proto__ is a key of SPADE's arguments like any other.
  '<tool_call><function=f><parameter=__proto__>{"a": 1}</parameter></function></tool_call>',
];

describe('tool calls: the host and the harness read the same calls', () => {
  const python = process.env.SPADE_WORKBENCH_VENV ? join(process.env.SPADE_WORKBENCH_VENV, 'bin', 'python') : 'python3';
  it.runIf(probePython())('agrees on the whole corpus (and with SPADE\'s answer rule)', () => {
    const script = [
      'import json, sys',
      'sys.path.insert(0, "native")',
      'from spade_tool_calls import parse_block, parse_tool_calls, has_answer',
      'def plain(v):',
      '    if isinstance(v, float) and v != v: return "NaN"',
      '    if isinstance(v, float) and v in (float("inf"), float("-inf")): return "Infinity" if v > 0 else "-Infinity"',
      '    if isinstance(v, dict): return {k: plain(x) for k, x in v.items()}',
      '    if isinstance(v, list): return [plain(x) for x in v]',
      '    return v',
      'out = []',
      'for text in json.load(sys.stdin):',
      // the name as SPADE's execute_tool spells it (f"tool_{name}"); the value itself is SPADE's
      // and the block each call came from, which the harness reads again (cmd_tool) to the same call
      '    calls = [{"name": str(c["name"]), "arguments": c["arguments"], "block": c["block"], "again": repr(parse_block(c["block"])) == repr(c)} for c in parse_tool_calls(text)]',
      '    out.append({"answer": has_answer(text), "calls": plain(calls)})',
      'print(json.dumps(out, allow_nan=False))',
    ].join('\n');
    const raw = execFileSync(python, ['-I', '-c', script], { input: JSON.stringify(CORPUS), encoding: 'utf8' });
    const fromPython = JSON.parse(raw) as unknown[];
    const plain = (_k: string, v: unknown): unknown => (typeof v === 'number' && !Number.isFinite(v) ? (Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity') : v);
    const fromHost = CORPUS.map((text) => ({
      answer: /<answer>[\s\S]*?<\/answer>/.test(text),
      calls: parseToolCalls(text).map((c) => ({ name: c.name, arguments: JSON.parse(JSON.stringify(c.arguments, plain)) as unknown, block: c.block, again: true })),
    }));
    expect(fromHost).toEqual(fromPython);
    // the corpus reaches every branch: both forms, nested arguments cut to {}, and dropped blocks
    expect(fromHost[1]!.calls).toMatchObject([{ name: 'add', arguments: { a: 2, b: 3 } }]);
    expect(fromHost[3]!.calls[0]!.arguments).toEqual({});
    expect(fromHost[9]!.calls).toMatchObject([{ name: 'lookup', arguments: { city: 'Paris', n: 5 } }]);
    expect(fromHost[8]!.calls).toEqual([]);
    expect(fromHost[14]!.calls[0]!.arguments).toEqual({ v: 'NaN', w: ['Infinity', '-Infinity'], s: 'NaN' });
    // Non-object arguments are kept (SPADE's tool_call_parser.py, _parse_json_block), never turned into {}.
    const args = (text: string): unknown => fromHost[CORPUS.indexOf(text)]!.calls.map((c) => c.arguments);
    expect(args('<tool_call>{"name": "add", "arguments": [2, 3]}</tool_call>')).toEqual([[2, 3]]);
    expect(args('<tool_call>{"name": "add", "arguments": "[2, 3]"}</tool_call>')).toEqual([[2, 3]]);
    expect(args('<tool_call>{"name": "add", "arguments": 5}</tool_call>')).toEqual([5]);
    expect(args('<tool_call>{"name": "add", "arguments": null}</tool_call>')).toEqual([null]);
    expect(args('<tool_call>{"name": "p", "arguments": null, "parameters": {"a": 1}}</tool_call>')).toEqual([null]);
    expect(args('<tool_call>{"name": "p"}</tool_call>')).toEqual([{}]);
    expect(args('<tool_call>[1, 2]</tool_call>')).toEqual([]);
    // Names that are not strings, spelled as Python spells them (and so as SPADE's execute_tool looks them up).
    const names = (text: string): string[] => fromHost[CORPUS.indexOf(text)]!.calls.map((c) => c.name);
    expect(names('<tool_call>{"name": true, "arguments": {"a": 1}}</tool_call>')).toEqual(['True']);
    expect(names('<tool_call>{"name": null, "arguments": {}}</tool_call>')).toEqual(['None']);
    expect(fromHost.flatMap((r) => r.calls.map((c) => c.name))).toEqual(expect.arrayContaining(['1.0', '1', '0', '-0.0', '1e+16', '1000000000000000.0', 'inf', 'nan', '-inf', "[1, 'a', None, True, 2.5, {'k': \"it's\"}]", "{'b': 3, '1': 2}", 'inner']));
  });

  it.runIf(probePython())('a sweep node sends the blocks this host sends, those nested past either stack included', () => {
    const nest = (n: number): string => `${'['.repeat(n)}${']'.repeat(n)}`;
    const texts = [
      ...CORPUS,
      `<tool_call>{"name": "show", "arguments": {"x": ${nest(3000)}}}</tool_call> <tool_call>{"name": "add", "arguments": {"a": 1.0}}</tool_call>`,
      `<tool_call>{"arguments": {"x": ${nest(50_000)}}, "name": "show"}</tool_call><tool_call><function=f><parameter=y>${nest(2000)}</parameter></function></tool_call>`,
      // not a call at all, but SPADE's json.loads of it raises before it can say so
      `<tool_call>${'['.repeat(950)}</tool_call>`,
      `<tool_call>{"name": "s", "arguments": {"q": "${'['.repeat(950)}\\"{"}}</tool_call>`,
    ];
    const script = [
      'import json, sys',
      'sys.path.insert(0, "native")',
      'from spade_tool_calls import calls_to_send, nesting',
      'print(json.dumps([[[c["block"], nesting(c["block"])] for c in calls_to_send(t)] for t in json.load(sys.stdin)]))',
    ].join('\n');
    const fromNode = JSON.parse(execFileSync(python, ['-I', '-c', script], { input: JSON.stringify(texts), encoding: 'utf8', maxBuffer: 64 << 20 })) as [string, number][][];
    expect(fromNode).toEqual(texts.map((t) => parseToolCalls(t).map((c) => [c.block, callNesting(c.block)])));
    expect(fromNode.at(-3)).toHaveLength(2);
    // brackets inside strings (escaped quotes included) do not nest
    expect(fromNode.at(-1)![0]![1]).toBe(2);
    expect(parseToolCalls(texts.at(-2)!)).toEqual([{ name: '', arguments: null, block: '['.repeat(950) }]);
  });
});
