import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../core/memory/db';
import { memoryCatalog } from '../../../core/episodes/catalog';
import { EpisodeService } from '../../../core/episodes/service';
import { EpisodeStore } from '../../../core/episodes/episodeStore';
import { firstPrompt } from '../../../core/episodes/hint';
import { ChatClient, type EndpointConfig } from '../../../core/models/client';
import { modelPlayer } from '../../../core/episodes/agent';
import { parseToolCalls } from '../../../core/models/toolCalls';
import { toolCallsAsText } from '../../../core/models/extract';
import { ModelService } from '../../../core/runs/modelService';
import { RunService } from '../../../core/runs/service';
import { endpointSchema } from '../../../core/api/calls/models';
import { FakeRuntime, type FakeGame } from '../../helpers/fakeRuntime';
import { startStandIn, type Responder, type StandIn } from '../../helpers/standInOpenAi';

let server: StandIn | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

function cfg(url: string, over: Partial<EndpointConfig> = {}): EndpointConfig {
  return { baseUrl: url, model: 'stand-in', apiKey: 'sk-test', temperature: 1, topP: 0.95, topK: 20, maxTokens: 512, thinking: null, turnTimeoutMs: 5000, retries: 3, concurrency: 4, stream: false, ...over };
}

/** Guess-the-number: 7 wins. */
const guess = (): FakeGame => {
  let turns = 0;
  return {
    reset: () => {
      turns = 0;
      return 'Guess a number 1-10.';
    },
    step: (a) => {
      turns++;
      if (a === '\\boxed{7}') return ['Correct!', 1, true, false, {}];
      return [turns >= 5 ? 'Out of turns' : `No, not ${a}.`, 0, false, turns >= 5, {}];
    },
  };
};

function setup(make: () => FakeGame, budget = 30) {
  const db = openDatabase(':memory:');
  const catalog = memoryCatalog(db);
  const svc = new EpisodeService({ store: new EpisodeStore(db), catalog, runtime: new FakeRuntime(make), defaults: () => ({ maxTurns: budget }) });
  const hash = catalog.add(`class GuessEnv:\n    pass  # ${Math.random()}\n`, 'guess', 'guess.py');
  const runs = new RunService({ db, catalog, minShare: () => 1 });
  return { svc, hash, runs, db };
}

describe('chat client against the stand-in server', () => {
  it('reads JSON and SSE answers alike: content, tool calls, finish_reason, usage', async () => {
    server = await startStandIn(() => ({ content: 'so \\boxed{7}', reasoning: 'hmm', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'look', arguments: '{"q": "a b c"}' } }], finish_reason: 'tool_calls' }));
    for (const stream of [false, true]) {
      const c = await new ChatClient(cfg(server.url, { stream })).complete([{ role: 'user', content: 'hi' }]);
      expect(c.text).toBe('so \\boxed{7}');
      expect(c.reasoning).toBe('hmm');
      expect(c.toolCalls).toMatchObject([{ id: 'c1', function: { name: 'look', arguments: '{"q": "a b c"}' } }]);
      expect(c.finishReason).toBe('tool_calls');
      expect(c.usage?.total_tokens).toBeGreaterThan(0);
    }
    expect(server.requests[1]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });
  it('a tool call named by a JSON value that is not a string keeps it, streamed or not, and SPADE\'s parser names it', async () => {
    // A server's tool call carries the name the model wrote; SPADE reads the model's text, where
    // {"name": true} is looked up as tool_True (Python's str), never "true".
    const named = (name: unknown) => ({ id: 'c', type: 'function' as const, function: { name: name as string, arguments: '{}' } });
    server = await startStandIn(() => ({ content: '', tool_calls: [named(true), named(1.5), named(2), named('ok')], finish_reason: 'tool_calls' }));
    for (const stream of [false, true]) {
      const c = await new ChatClient(cfg(server.url, { stream })).complete([{ role: 'user', content: 'hi' }]);
      expect(c.toolCalls.map((t) => t.function?.name)).toEqual([true, 1.5, 2, 'ok']);
      expect(parseToolCalls(toolCallsAsText(c.toolCalls)).map((t) => t.name)).toEqual(['True', '1.5', '2', 'ok']);
    }
  });
  it('retries 429 after Retry-After, 5xx with backoff and dropped connections; not a 400', async () => {
    const plan: Parameters<Responder>[0][] = [];
    const replies = [{ status: 429, error: 'slow down', retryAfter: '2' }, { status: 503, error: 'busy' }, { drop: true as const }, { content: 'ok' }];
    server = await startStandIn((b, n) => (plan.push(b), replies[n] ?? { content: 'late' }));
    const waits: number[] = [];
    const client = new ChatClient(cfg(server.url, { retries: 5 }), { sleep: async (ms) => void waits.push(ms), backoffMs: 100 });
    const c = await client.complete([{ role: 'user', content: 'x' }]);
    expect(c.text).toBe('ok');
    expect(c.attempts).toBe(4);
    expect(waits).toEqual([2000, 200, 400]);
    await server.close();
    server = await startStandIn(() => ({ status: 400, error: 'bad top_k' }));
    await expect(new ChatClient(cfg(server.url), { sleep: async () => {} }).complete([{ role: 'user', content: 'x' }])).rejects.toMatchObject({ kind: 'http', status: 400, message: 'HTTP 400: bad top_k' });
    expect(server.requests).toHaveLength(1);
  });
  it('keeps connections alive: turns reuse them, never more than the concurrency; a refused connection is a network error', async () => {
    const ports: number[] = [];
    server = await startStandIn((_b, _n, conn) => (ports.push(conn.remotePort), { content: 'ok', delayMs: 20 }));
    const client = new ChatClient(cfg(server.url, { concurrency: 3 }));
    for (let i = 0; i < 5; i++) await client.complete([{ role: 'user', content: `one at a time ${i}` }]);
    // The undici fetch also kept connections alive; the point is that ours does as well.
    expect(new Set(ports).size).toBe(1);
    ports.length = 0;
    await Promise.all(Array.from({ length: 12 }, (_, i) => client.complete([{ role: 'user', content: `together ${i}` }])));
    expect(ports).toHaveLength(12);
    expect(new Set(ports).size).toBeLessThanOrEqual(3);
    // SSE over a kept-alive connection, after JSON answers on it.
    const s = await new ChatClient(cfg(server.url, { stream: true, concurrency: 1 })).complete([{ role: 'user', content: 'streamed' }]);
    expect(s.text).toBe('ok');
    const url = server.url;
    await server.close();
    server = null;
    await expect(new ChatClient(cfg(url, { retries: 0 })).complete([{ role: 'user', content: 'x' }])).rejects.toMatchObject({ kind: 'network', message: expect.stringMatching(/ECONNREFUSED/) });
  });
  it('a stream cut before its end is retried; a slow answer past the turn timeout fails', async () => {
    server = await startStandIn((_b, n) => (n === 0 ? { drop: true } : n === 1 ? { content: 'whole answer' } : { content: 'slow', delayMs: 800 }));
    const c = await new ChatClient(cfg(server.url, { stream: true }), { sleep: async () => {} }).complete([{ role: 'user', content: 'x' }]);
    expect(c.text).toBe('whole answer');
    await expect(new ChatClient(cfg(server.url, { turnTimeoutMs: 200, retries: 0 })).complete([{ role: 'user', content: 'x' }])).rejects.toMatchObject({ kind: 'timeout' });
  });
});

describe("SPADE's agent protocol over the stand-in", () => {
  it('sends exactly SPADE messages: game template with the hinted first observation, raw observations after, sampling as configured', async () => {
    const answers = ['I try \\boxed{3}', '<think>\\boxed{1}</think> then \\boxed{ 7 }'];
    // the answer depends on the turn within the conversation (assistant messages so far)
    server = await startStandIn((b) => ({ content: answers[(b.messages as { role: string }[]).filter((m) => m.role === 'assistant').length] ?? '\\boxed{7}' }));
    const { svc, hash } = setup(guess);
    const client = new ChatClient(cfg(server.url, { thinking: true }));
    const r = await svc.regret({ hash, seeds: 1, seedStart: 4, hintText: ' think of  7\n', arms: undefined, player: modelPlayer(client, { thinking: true, policy: { kind: 'llm' } }) } as never);
    // hinted arm first: the hinted cognitive play does not cut </think>, so turn 2 plays \boxed{1}
    const hinted = server.requests.slice(0, 3).map((b) => b.messages);
    expect(hinted[0]).toEqual([{ role: 'user', content: firstPrompt('Guess a number 1-10.\n\nHINT:  think of  7\n') }]);
    expect(hinted[1]).toEqual([
      { role: 'user', content: firstPrompt('Guess a number 1-10.\n\nHINT:  think of  7\n') },
      { role: 'assistant', content: 'I try \\boxed{3}' },
      { role: 'user', content: 'No, not \\boxed{3}.' },
    ]);
    expect((hinted[2] as unknown[]).at(-1)).toEqual({ role: 'user', content: 'No, not \\boxed{1}.' });
    expect(server.requests[0]).toMatchObject({ model: 'stand-in', temperature: 1, top_p: 0.95, top_k: 20, max_tokens: 512, chat_template_kwargs: { enable_thinking: true } });
    // the unhinted arm (thinking mode) cuts at </think>: turn 2 plays \boxed{7} and wins
    const unhinted = server.requests[3]!.messages as { content: string }[];
    expect(unhinted[0]!.content).toBe(firstPrompt('Guess a number 1-10.'));
    expect(r.withHint.returns).toEqual([1]);
    expect(r.withoutHint.returns).toEqual([1]);
    const ep = svc.get(r.withoutHint.episodeIds[0]!);
    const agent = ep.episode.meta.agent as { messages: unknown[]; turns: { action: string; raw: string; latencyMs: number; usage: unknown }[] };
    expect(agent.turns.map((t) => t.action)).toEqual(['\\boxed{3}', '\\boxed{7}']);
    expect(agent.messages).toHaveLength(4);
    expect(agent.turns[1]!.usage).toBeTruthy();
  });
  it('a reply cut by max_tokens ends the unhinted episode truncated (return 0); the budget counts turns', async () => {
    server = await startStandIn(() => ({ content: '\\boxed{2} and more', finish_reason: 'length' }));
    const { svc, hash } = setup(guess);
    const r = await svc.regret({ hash, seeds: 1, seedStart: 0, hintText: 'h', player: modelPlayer(new ChatClient(cfg(server.url)), { thinking: false, policy: { kind: 'llm' } }) });
    expect(r.withoutHint.returns).toEqual([0]);
    const ep = svc.get(r.withoutHint.episodeIds[0]!);
    expect(ep.steps).toHaveLength(1); // the reset only: the cut turn never reached step()
    expect((ep.episode.meta.agent as { endedBy: string }).endedBy).toBe('length');
    await server.close();
    server = await startStandIn(() => ({ content: '\\boxed{2}' }));
    const b = setup(() => ({ reset: () => 'o', step: () => ['no', 0, false, false, {}] }), 4);
    const r2 = await b.svc.regret({ hash: b.hash, seeds: 1, seedStart: 0, hintText: 'h', player: modelPlayer(new ChatClient(cfg(server.url)), { thinking: false, policy: { kind: 'llm' } }) });
    expect(b.svc.get(r2.withoutHint.episodeIds[0]!).steps.filter((s) => s.kind === 'step')).toHaveLength(4);
    expect(server.requests).toHaveLength(8);
  });
  it('tool-use: tools passed as tools=, calls to execute_tool as tool messages, <answer> to step, XML values unescaped and JSON-decoded', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'lookup', description: 'find', parameters: { type: 'object', properties: {} } } }];
    const seen: Record<string, unknown>[] = [];
    const game = (): FakeGame => ({
      reset: () => 'Find the code.',
      step: (a) => (/<answer>42<\/answer>/.test(a) ? ['Correct!', 1, true, false, {}] : ['Format error: use tools to call a function, or <answer>result</answer> to submit.', -0.1, false, false, {}]),
      tools,
      tool: (name, args) => (seen.push({ name, args }), `code is 42 for ${JSON.stringify(args)}`),
    });
    const replies = [
      { content: 'let me look <tool_call>\n<function=lookup>\n<parameter=key> a &lt;b&gt; </parameter>\n<parameter=n>5</parameter>\n</function>\n</tool_call>' },
      { content: 'no tags here' },
      { content: '', tool_calls: [{ id: 'call_9', type: 'function' as const, function: { name: 'lookup', arguments: '{"n": 6}' } }] },
      { content: '<tool_call>{"name": "lookup", "arguments": {}}</tool_call> <answer>42</answer>' },
    ];
    server = await startStandIn((_b, n) => replies[n] ?? { content: '<answer>0</answer>' });
    const db = openDatabase(':memory:');
    const catalog = memoryCatalog(db);
    const svc = new EpisodeService({ store: new EpisodeStore(db), catalog, runtime: new FakeRuntime(game, { toolUse: true }), defaults: () => ({ maxTurns: 30 }) });
    const hash = catalog.add('class T:\n    pass\n', 't', 't.py');
    const r = await svc.regret({ hash, seeds: 1, seedStart: 0, hintText: 'use lookup', arms: ['hint'], player: modelPlayer(new ChatClient(cfg(server.url)), { thinking: false, policy: { kind: 'llm' } }) } as never);
    expect(server.requests[0]!.tools).toEqual(tools);
    expect(server.requests[0]!.messages).toEqual([{ role: 'user', content: 'Find the code.\n\nHINT: use lookup' }]);
    expect(seen).toEqual([{ name: 'lookup', args: { key: 'a <b>', n: 5 } }, { name: 'lookup', args: { n: 6 } }]);
    const m = server.requests[3]!.messages as Record<string, unknown>[];
    expect(m.slice(1)).toEqual([
      { role: 'assistant', content: replies[0]!.content },
      { role: 'tool', content: 'code is 42 for {"key":"a <b>","n":5}' },
      { role: 'assistant', content: 'no tags here' },
      { role: 'user', content: 'Format error: use tools to call a function, or <answer>result</answer> to submit.' },
      { role: 'assistant', content: '', tool_calls: replies[2]!.tool_calls },
      { role: 'tool', content: 'code is 42 for {"n":6}', tool_call_id: 'call_9' },
    ]);
    expect(r.withHint.returns).toEqual([1]);
    const ep = svc.get(r.withHint.episodeIds[0]!);
    expect(ep.steps.filter((s) => s.kind === 'step').map((s) => s.action)).toEqual(['no tags here', replies[3]!.content]);
  });
  it("reads tool calls as SPADE's parser does, quirks included", () => {
    expect(parseToolCalls('<tool_call>{"name": "f", "arguments": {"a": {"b": 1}}}</tool_call>')).toEqual([{ name: 'f', arguments: {}, block: '{"name": "f", "arguments": {"a": {"b": 1}}}' }]);
    expect(parseToolCalls('<tool_call>{"name": "f", "parameters": "{\\"x\\": 1}"}</tool_call>')).toMatchObject([{ name: 'f', arguments: { x: 1 } }]);
    expect(parseToolCalls('<tool_call><function=g><parameter=s>&quot;hi&quot;</parameter><parameter=t>true</parameter></function></tool_call><tool_call>junk</tool_call>')).toMatchObject([{ name: 'g', arguments: { s: 'hi', t: true } }]);
    // Each call keeps the block it was read from: the harness reads it again, in Python.
    expect(parseToolCalls('x <tool_call>\n{"name": "f", "arguments": {"a": 1.0}}\n</tool_call>')[0]!.block).toBe('\n{"name": "f", "arguments": {"a": 1.0}}\n');
  });
  it('a model failure after its retries ends the episode as failed: no return in either arm', async () => {
    server = await startStandIn(() => ({ status: 500, error: 'down' }));
    const { svc, hash } = setup(guess);
    const r = await svc.regret({ hash, seeds: 2, seedStart: 0, hintText: 'h', player: modelPlayer(new ChatClient(cfg(server.url, { retries: 1 }), { sleep: async () => {} }), { thinking: false, policy: { kind: 'llm' } }) });
    expect(r.withoutHint.returns).toEqual([]);
    // A failed hinted play is no return of 0 either: a dead endpoint must not read as a measured arm.
    expect(r.withHint.returns).toEqual([]);
  });
});

describe('model service', () => {
  it('sends the named secret as the bearer key, refuses a missing one, and reports regret per skill beside the recorded one', async () => {
    server = await startStandIn((b) => ({ content: String((b.messages as { content: string }[])[0]!.content).includes('HINT: ') ? '\\boxed{7}' : '\\boxed{1}' }));
    const { svc, hash, runs } = setup(guess);
    const secrets = new Map([['OPENAI_KEY', 'sk-sealed-value']]);
    const models = new ModelService({ episodes: svc, runs, secret: (n) => secrets.get(n), envInfo: () => ({ skill: 'logical_deduction', recordedRegret: 0.25, recordedWinRate: null }) });
    const endpoint = endpointSchema.parse({ baseUrl: server.url, model: 'm', apiKeySecret: 'OPENAI_KEY' });
    const r = await models.play({ hashes: [hash], endpoint, seeds: 2, seedStart: 0, arms: ['hint', 'nohint'], hintText: 'seven', estimator: 'paired' });
    expect(server.auth.every((a) => a === 'Bearer sk-sealed-value')).toBe(true);
    expect(r.envs).toEqual([expect.objectContaining({ rHint: 1, rNoHint: 0, regret: 1, recordedRegret: 0.25, skill: 'logical_deduction' })]);
    expect(r.bySkill).toEqual([{ skill: 'logical_deduction', envs: 1, meanRegret: 1, meanRHint: 1, meanRNoHint: 0 }]);
    expect(r.episodes).toHaveLength(4);
    expect(r.episodes[0]!.turns[0]!.latencyMs).toBeGreaterThan(0);
    await expect(models.play({ hashes: [hash], endpoint: { ...endpoint, apiKeySecret: 'MISSING' }, seeds: 1, seedStart: 0, arms: ['hint'] })).rejects.toMatchObject({ code: 'invalid_input' });
  });
});

describe('model episodes replay', () => {
  it('a tool-use model episode replays with its tool turns put back, without divergence', async () => {
    const game = (): FakeGame => {
      let unlocked = false;
      return {
        reset: () => ((unlocked = false), 'Open the box.'),
        step: (a) => (/<answer>/.test(a) ? (unlocked ? ['Correct!', 1, true, false, {}] : ['Locked.', 0, false, false, {}]) : ['Format error', -0.1, false, false, {}]),
        tools: [{ type: 'function', function: { name: 'unlock', description: 'unlock', parameters: {} } }],
        tool: () => ((unlocked = true), 'unlocked'),
      };
    };
    server = await startStandIn((b) => ((b.messages as unknown[]).length === 1 ? { content: '<tool_call><function=unlock></function></tool_call>' } : { content: '<answer>open</answer>' }));
    const db = openDatabase(':memory:');
    const catalog = memoryCatalog(db);
    const svc = new EpisodeService({ store: new EpisodeStore(db), catalog, runtime: new FakeRuntime(game, { toolUse: true }), defaults: () => ({ maxTurns: 30 }) });
    const hash = catalog.add('class Box:\n    pass\n', 'box', 'box.py');
    const r = await svc.regret({ hash, seeds: 1, seedStart: 0, hintText: 'h', arms: ['nohint'], player: modelPlayer(new ChatClient(cfg(server.url)), { thinking: false, policy: { kind: 'llm' } }) } as never);
    expect(r.withoutHint.returns).toEqual([1]);
    const rep = await svc.replay(r.withoutHint.episodeIds[0]!);
    expect(rep.divergence).toBeNull();
    expect(rep.compared).toBe(2);
  });
});

describe('one model turn at a time in a live episode', () => {
  it("continues SPADE's transcript turn by turn, records each step, and stops when the episode is over", async () => {
    const answers = ['\\boxed{2}', '\\boxed{5}', 'so \\boxed{7}'];
    server = await startStandIn((b) => ({ content: answers[(b.messages as { role: string }[]).filter((m) => m.role === 'assistant').length] ?? '\\boxed{1}' }));
    const { svc, hash, runs } = setup(guess);
    const models = new ModelService({ episodes: svc, runs, secret: () => undefined, envInfo: () => ({ skill: null, recordedRegret: null, recordedWinRate: null }) });
    const endpoint = endpointSchema.parse({ baseUrl: server.url, model: 'm' });
    const opened = await svc.open({ hash, seed: 3, hint: true, hintText: 'lucky', label: '' });
    const id = opened.episode.id;
    for (let k = 0; k < 3; k++) expect((await models.turn(id, endpoint)).ended).toBeNull();
    const last = await models.turn(id, endpoint);
    expect(last.ended).toBe('the episode is over');
    expect(server.requests).toHaveLength(3);
    expect(server.requests[2]!.messages).toEqual([
      { role: 'user', content: firstPrompt('Guess a number 1-10.\n\nHINT: lucky') },
      { role: 'assistant', content: '\\boxed{2}' },
      { role: 'user', content: 'No, not \\boxed{2}.' },
      { role: 'assistant', content: '\\boxed{5}' },
      { role: 'user', content: 'No, not \\boxed{5}.' },
    ]);
    const ep = svc.get(id);
    expect(ep.steps.map((s) => s.action)).toEqual([null, '\\boxed{2}', '\\boxed{5}', '\\boxed{7}']);
    expect(ep.episode.totalReturn).toBe(1);
    const agent = ep.episode.meta.agent as { turns: { stepIdx: number; raw: string }[]; messages: unknown[] };
    expect(agent.turns.map((t) => t.stepIdx)).toEqual([1, 2, 3]);
    expect(agent.messages).toHaveLength(6);
  });
});
