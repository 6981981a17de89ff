/**
 * A tool call's arguments reach the game as SPADE passes them: the values Python's json.loads makes
 * of the model's text (1.0 a float, 12345678901234567890 whole, the last of duplicate keys, NaN and
 * Infinity as floats, `true` as True, HTML entities as Python's html.unescape reads them), never
 * what JSON.parse made of it (issue 35). Played by a scripted policy and by a model on the stand-in
 * OpenAI server, in Pyodide and in native CPython, and replayed; the expected outputs come from the
 * real interpreter: json.loads and ToolUseBaseEnv.execute_tool, outside any harness.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ingest } from '../../../core/memory/repository';
import { sha256 } from '../../../core/memory/parse';
import { ChatClient } from '../../../core/models/client';
import { modelPlayer } from '../../../core/episodes/agent';
import { probePython } from '../../../core/runtime/native';
import { Services } from '../../../core/services/services';
import { startStandIn, type StandIn } from '../../helpers/standInOpenAi';
import { tempDir } from '../../helpers/tmp';

const FIXTURES = join(process.cwd(), 'tests', 'fixtures', 'tool-args');
const ARGS_GAME = readFileSync(join(FIXTURES, 'args_env.py'), 'utf8');
const ECHO_GAME = readFileSync(join(FIXTURES, 'echo_env.py'), 'utf8');
const ODD_GAME = readFileSync(join(FIXTURES, 'odd_result_env.py'), 'utf8');
const python = process.env.SPADE_WORKBENCH_VENV ? join(process.env.SPADE_WORKBENCH_VENV, 'bin', 'python') : 'python3';

/** A server's structured call: name and the `arguments` string, as an OpenAI-compatible server sends them. */
type Structured = { name: string; arguments: string }[];

/**
 * What SPADE's rollout gives for each turn, from the interpreter itself: text turns read by SPADE's
 * parser (native/spade_tool_calls.py, checked against SPADE's rule by contract.test.ts), a server's
 * calls by json.loads of their arguments, each call then sent to the game's execute_tool.
 */
function spadeOutputs(source: string, cls: string, turns: (string | Structured)[]): string[][] {
  const script = [
    'import json, sys',
    'sys.path.insert(0, "native")',
    'from harness_tool_base import ToolUseBaseEnv',
    'from spade_tool_calls import has_answer, parse_tool_calls',
    'req = json.load(sys.stdin)',
    'ns = {"ToolUseBaseEnv": ToolUseBaseEnv}',
    'exec(compile(req["source"], "<env>", "exec"), ns)',
    'env = ns[req["cls"]]()',
    'env.reset(seed=0)',
    'out = []',
    'for turn in req["turns"]:',
    '    if isinstance(turn, str):',
    '        calls = [] if has_answer(turn) else [(c["name"], c["arguments"]) for c in parse_tool_calls(turn)]',
    '    else:',
    '        calls = [(c["name"], json.loads(c["arguments"])) for c in turn]',
    '    out.append([env.execute_tool(n, a)["output"] for n, a in calls])',
    'print(json.dumps(out))',
  ].join('\n');
  return JSON.parse(execFileSync(python, ['-I', '-c', script], { input: JSON.stringify({ source, cls, turns }), encoding: 'utf8' })) as string[][];
}

/**
 * SPADE's rollout for one tool call to a game's own execute_tool, in the real interpreter: the tool
 * message is tool_result.get("output", ""); anything raised there fails the episode (its catch-all).
 */
function spadeToolMessage(source: string, cls: string, name: string): { output: string } | { failed: string } {
  const script = [
    'import json, sys',
    'sys.path.insert(0, "native")',
    'from harness_tool_base import ToolUseBaseEnv',
    'req = json.load(sys.stdin)',
    'ns = {"ToolUseBaseEnv": ToolUseBaseEnv}',
    'exec(compile(req["source"], "<env>", "exec"), ns)',
    'env = ns[req["cls"]]()',
    'env.reset(seed=0)',
    'try:',
    '    print(json.dumps({"output": env.execute_tool(req["name"], {}).get("output", "")}))',
    'except Exception as e:',
    '    print(json.dumps({"failed": f"{type(e).__name__}: {e}"}))',
  ].join('\n');
  return JSON.parse(execFileSync(python, ['-I', '-c', script], { input: JSON.stringify({ source, cls, name }), encoding: 'utf8' })) as { output: string } | { failed: string };
}

/** Every turn of the game's tool path: the values JSON.parse would change, in both call forms. */
const ARGS_TURNS = [
  '<tool_call>{"name": "add", "arguments": {"a": 12345678901234567890, "b": 1}}</tool_call>',
  '<tool_call>{"name": "show", "arguments": {"f": 1e400, "g": -0, "h": -0.0, "d": 1, "d": 2.5, "__proto__": {"x": NaN}, "s": "\\ud800", "t": true, "z": null, "i": -Infinity}}</tool_call>',
  '<tool_call><function=kind><parameter=x>1.0</parameter></function></tool_call> <tool_call><function=show><parameter=w> caf&eacute; &#x41;&lt; </parameter><parameter=v>[1.0, true, 1E2]</parameter></function></tool_call>',
  '<tool_call>{"name": "kind", "arguments": "{\\"x\\": 2.0}"}</tool_call>',
  '<tool_call>{"name": "add", "arguments": {"a": 1.0, "b": 2}}</tool_call>',
  '<answer>3.0</answer>',
];

const ECHO_TURNS = [
  '<tool_call>{"name": "echo", "arguments": {"flag": true, "v": 1.0, "n": 12345678901234567890}}</tool_call>',
  '<tool_call>{"name": 5, "arguments": {"k": -0.0}}</tool_call>',
  '<tool_call><function=echo><parameter=b>false</parameter><parameter=e>1e400</parameter></function></tool_call>',
  '<answer>done</answer>',
];

type ToolTurn = { calls: { name: string }[]; outputs: { output: string }[] };
const toolOutputs = (meta: unknown): string[][] => ((meta as { agent?: { toolTurns?: ToolTurn[] } }).agent?.toolTurns ?? []).map((t) => t.outputs.map((o) => o.output));

const tmp = tempDir('spade-tool-args-');
let s: Services;
let server: StandIn | null = null;
const hashes: Record<string, string> = {};
beforeAll(() => {
  s = new Services({ dataDir: tmp.dir, shell: 'in-process' });
  for (const [stem, source] of [['args_env', ARGS_GAME], ['echo_env', ECHO_GAME], ['odd_result_env', ODD_GAME]] as const) {
    ingest(s.db, { source, path: join(FIXTURES, `${stem}.py`), fileStem: stem });
    hashes[stem] = sha256(source);
  }
});
afterEach(async () => {
  await server?.close();
  server = null;
});
afterAll(async () => {
  await s.close();
  tmp.cleanup();
});

const runtimes = probePython() ? (['pyodide', 'cpython'] as const) : (['pyodide'] as const);

describe.each(runtimes)("a tool call's arguments are SPADE's Python values (%s)", (runtime) => {
  it('a scripted policy: outputs as json.loads and execute_tool give them, the float answer wins, and the episode replays', async () => {
    const expected = spadeOutputs(ARGS_GAME, 'ArgsEnv', ARGS_TURNS).filter((o) => o.length);
    expect(expected[0]).toEqual(['12345678901234567891']);
    expect(expected.at(-1)).toEqual(['3.0']);
    const ep = s.episodes;
    const { episode } = await ep.open({ hash: hashes.args_env!, seed: 0, hint: false, label: '', runtime });
    const ran = await ep.run(episode.id, { kind: 'script', actions: ARGS_TURNS, extract: false }, { kind: 'done' }, 50);
    expect(toolOutputs(ran.episode.meta)).toEqual(expected);
    // The game accepts "3.0" only when add saw the float 1.0 (an int would have made it "3").
    expect(ran.steps.at(-1)!.reward).toBe(1);
    expect(ran.steps.at(-1)!.terminated).toBe(true);
    const rep = await ep.replay(episode.id);
    expect(rep.divergence, JSON.stringify(rep.divergence)).toBeNull();
    expect(rep.compared).toBe(ran.steps.length);
  });

  it('a game overriding execute_tool gets the values themselves: True, 1.0, a whole big integer, a name json.loads made 5', async () => {
    const expected = spadeOutputs(ECHO_GAME, 'EchoEnv', ECHO_TURNS).filter((o) => o.length);
    expect(expected[1]).toEqual(["(5, {'k': -0.0})"]);
    const ep = s.episodes;
    const { episode } = await ep.open({ hash: hashes.echo_env!, seed: 0, hint: false, label: '', runtime });
    const ran = await ep.run(episode.id, { kind: 'script', actions: ECHO_TURNS, extract: false }, { kind: 'done' }, 50);
    expect(toolOutputs(ran.episode.meta)).toEqual(expected);
    expect(ran.steps.at(-1)!.reward).toBe(1);
  });

  it("a game's own execute_tool: what SPADE's rollout reads with .get(\"output\", \"\"), and a result it cannot read or a raise fails the episode", async () => {
    for (const name of ['text', 'boom', 'getter', 'nooutput']) {
      const spade = spadeToolMessage(ODD_GAME, 'OddResultEnv', name);
      const r = await s.episodes.regretMany({ hashes: [hashes.odd_result_env!], seeds: 1, seedStart: 0, arms: ['nohint'], runtime, policy: { kind: 'script', actions: [`<tool_call>{"name": "${name}", "arguments": {}}</tool_call>`, '<answer>done</answer>'], extract: false } });
      const ep = r.episodes[0]!;
      if ('failed' in spade) {
        expect(spade.failed).toMatch(name === 'boom' ? /^ValueError: the tool broke/ : /^AttributeError: .*has no attribute 'get'/);
        expect(ep, name).toMatchObject({ failed: true, endedBy: 'error', error: expect.stringContaining(spade.failed.split(':')[0]!) });
        expect(r.envs[0]!.withoutHint.returns).toEqual([]);
      } else {
        expect(ep.failed, `${name}: ${ep.error}`).toBe(false);
        expect(r.envs[0]!.withoutHint.returns).toEqual([1]);
        // What the model is told the tool returned, as recorded by a played episode.
        const { episode } = await s.episodes.open({ hash: hashes.odd_result_env!, seed: 0, hint: false, label: '', runtime });
        const ran = await s.episodes.run(episode.id, { kind: 'script', actions: [`<tool_call>{"name": "${name}", "arguments": {}}</tool_call>`, '<answer>done</answer>'], extract: false }, { kind: 'done' }, 10);
        expect(toolOutputs(ran.episode.meta), name).toEqual([[spade.output]]);
      }
    }
  });

  it('arguments nested past the interpreter\'s stack fail the episode, as SPADE\'s parser raising fails its rollout', async () => {
    const deep = `<tool_call>{"name": "show", "arguments": {"x": ${'['.repeat(3000)}${']'.repeat(3000)}}}</tool_call>`;
    // Arguments first: SPADE reads the block as a whole document, here nested past JavaScript's stack too.
    const deeper = `<tool_call>{"arguments": {"x": ${'['.repeat(50_000)}${']'.repeat(50_000)}}, "name": "show"}</tool_call>`;
    // The real interpreter: SPADE's parser raises RecursionError (not the ValueError it catches).
    for (const text of [deep, deeper]) {
      const raised = execFileSync(python, ['-I', '-c', 'import sys\nsys.path.insert(0, "native")\nfrom spade_tool_calls import parse_tool_calls\ntry:\n    parse_tool_calls(sys.stdin.read())\n    print("read")\nexcept RecursionError:\n    print("RecursionError")'], { input: text, encoding: 'utf8' }).trim();
      expect(raised).toBe('RecursionError');
      const r = await s.episodes.regretMany({ hashes: [hashes.args_env!], seeds: 1, seedStart: 7, arms: ['nohint'], runtime, policy: { kind: 'script', actions: [text, '<answer>3.0</answer>'], extract: false } });
      // A failed episode: no return, counted in no mean.
      expect(r.envs[0]!.withoutHint.returns).toEqual([]);
      expect(r.episodes).toMatchObject([{ failed: true, endedBy: 'error', error: expect.stringContaining('RecursionError') }]);
    }
  });

  it("a model on the stand-in server: its structured calls' arguments strings and its text calls reach the game as json.loads reads them", async () => {
    const structured: Structured = [
      { name: 'add', arguments: '{"a": 1.0, "b": 2}' },
      { name: 'show', arguments: '{"n": 12345678901234567890, "x": NaN, "d": 1, "d": 1e-7}' },
    ];
    const text = ARGS_TURNS[2]!;
    const expected = spadeOutputs(ARGS_GAME, 'ArgsEnv', [structured, text]);
    expect(expected[0]![0]).toBe('3.0');
    server = await startStandIn((_b, n) =>
      n === 1
        ? { content: '', tool_calls: structured.map((c, i) => ({ id: `call-${i}`, type: 'function' as const, function: c })), finish_reason: 'tool_calls' }
        : n === 2
          ? { content: text }
          : { content: '<answer>3.0</answer>' },
    );
    const client = new ChatClient({ baseUrl: server.url, model: 'stand-in', apiKey: null, temperature: 1, topP: 1, topK: null, maxTokens: 256, thinking: null, turnTimeoutMs: 10_000, retries: 0, concurrency: 1, stream: false });
    const r = await s.episodes.regretMany({ hashes: [hashes.args_env!], seeds: 1, seedStart: 0, arms: ['nohint'], runtime, player: modelPlayer(client, { thinking: false, policy: { kind: 'llm' } }) });
    const played = r.envs[0]!.withoutHint;
    // What the model was told each tool returned: the tool messages of the last request.
    const last = server.requests.at(-1)!.messages as { role: string; content: string }[];
    expect(last.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(expected.flat());
    expect(played.returns).toEqual([1]);
    const rep = await s.episodes.replay(played.episodeIds[0]!);
    expect(rep.divergence, JSON.stringify(rep.divergence)).toBeNull();
  });
});
