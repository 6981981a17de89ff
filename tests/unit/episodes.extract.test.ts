import { describe, expect, it } from 'vitest';
import { boxedAnswer, extractAction, toolCallsAsText } from '../../core/models/extract';
import { parseToolCalls } from '../../core/models/toolCalls';
import { firstPrompt, injectHint, observationFromFirstPrompt, splitHint } from '../../core/episodes/hint';
import { candidateStems, parseTrajectories } from '../../core/episodes/trajectory';
import { parseActionsFile } from '../../core/episodes/actionsFile';

describe("SPADE's action extraction", () => {
  it('takes the first flat box and re-wraps it', () => {
    expect(extractAction('so \\boxed{12} or \\boxed{13}')).toBe('\\boxed{12}');
  });
  it('falls back to the last balanced box; an unclosed box is no answer', () => {
    expect(boxedAnswer('x = \\boxed{\\frac{1}{2}} done')).toBe('\\frac{1}{2}');
    expect(extractAction('answer \\boxed{\\frac{1}{2}}')).toBe('\\boxed{\\frac{1}{2}}');
    expect(boxedAnswer('cut off \\boxed{42')).toBeNull();
    expect(extractAction(' cut off \\boxed{42 ')).toBe('cut off \\boxed{42');
  });
  it('without a box gives the stripped text; with thinking only text after </think> counts', () => {
    expect(extractAction('  up  ')).toBe('up');
    expect(extractAction('<think>maybe \\boxed{1}</think> final \\boxed{2}', { thinking: true })).toBe('\\boxed{2}');
    expect(extractAction('<think>maybe \\boxed{1}</think> no box here', { thinking: true })).toBe('no box here');
    expect(extractAction('<think>maybe \\boxed{1}</think>x')).toBe('\\boxed{1}');
  });
  it('tool use keeps the text for the environment to parse, and turns tool_calls into <tool_call> blocks', () => {
    expect(extractAction('<think>hm</think> <tool_call>{"name":"a","arguments":{}}</tool_call>', { toolUse: true, thinking: true })).toBe('<tool_call>{"name":"a","arguments":{}}</tool_call>');
    // The arguments string goes in as the server sent it (JSON.parse would make 1.0 an int and round
    // big integers); one Python's json.loads refuses stays a JSON string (SPADE's parser makes it {}).
    expect(toolCallsAsText([{ function: { name: 'get', arguments: '{"id": 3, "w": 1.0, "n": 12345678901234567890, "x": NaN}' } }])).toBe('<tool_call>{"name":"get","arguments":{"id": 3, "w": 1.0, "n": 12345678901234567890, "x": NaN}}</tool_call>');
    expect(toolCallsAsText([{ function: { name: 'get', arguments: '{"id": 3' } }])).toBe('<tool_call>{"name":"get","arguments":"{\\"id\\": 3"}</tool_call>');
    expect(parseToolCalls(toolCallsAsText([{ function: { name: 'get', arguments: '{"id": 3' } }]))).toMatchObject([{ name: 'get', arguments: {} }]);
    // A name that is not a string stays that JSON value, for SPADE's parser to name (None, not "" or "null").
    expect(toolCallsAsText([{ function: { name: null, arguments: '{}' } }, { function: { arguments: '{}' } }])).toBe('<tool_call>{"name":null,"arguments":{}}</tool_call>\n<tool_call>{"name":"","arguments":{}}</tool_call>');
    expect(parseToolCalls(toolCallsAsText([{ function: { name: null } }, { function: { name: false } }])).map((c) => c.name)).toEqual(['None', 'False']);
  });
});

describe('hint format', () => {
  it("is SPADE's first observation plus a blank line and HINT:", () => {
    expect(injectHint('obs', 'try small numbers')).toBe('obs\n\nHINT: try small numbers');
    expect(splitHint('a\nb\n\nHINT: h')).toEqual({ observation: 'a\nb', hint: 'h' });
    expect(observationFromFirstPrompt(firstPrompt('the board'))).toBe('the board');
  });
});

describe('trajectory parsing', () => {
  const msgs = [
    { role: 'system', content: 's' },
    { role: 'user', content: firstPrompt('start\n\nHINT: go left') },
    { role: 'assistant', content: 'I pick \\boxed{left}' },
    { role: 'user', content: 'moved', reward: 0 },
    { role: 'assistant', content: '\\boxed{up}' },
  ];
  it('reads a bare array, an object with metadata, and JSONL of messages', () => {
    const [a] = parseTrajectories(JSON.stringify(msgs));
    expect(a!.initialObservation).toBe('start');
    expect(a!.hint).toBe('go left');
    expect(a!.steps.map((s) => [s.action, s.observation, s.reward])).toEqual([
      ['\\boxed{left}', 'moved', 0],
      ['\\boxed{up}', null, null],
    ]);
    const [b] = parseTrajectories(JSON.stringify({ messages: msgs, seed: 7, game_file: 'x/game_00000_001_pattern_recognition.py', rewards: [0, 1] }));
    expect(b!.seed).toBe(7);
    expect(b!.gameFile).toContain('game_00000_001');
    expect(b!.steps[1]!.reward).toBe(1);
    expect(parseTrajectories(msgs.map((m) => JSON.stringify(m)).join('\n'))).toHaveLength(1);
    expect(parseTrajectories([{ messages: msgs }, { messages: msgs }].map((m) => JSON.stringify(m)).join('\n'))).toHaveLength(2);
  });
  it('a tool-calling turn is a tool turn (execute_tool), its tool messages its outputs; the answer is a step', () => {
    const [t] = parseTrajectories(
      JSON.stringify([
        { role: 'user', content: 'task' },
        { role: 'assistant', content: '', tool_calls: [{ function: { name: 'lookup', arguments: { q: 1 } } }] },
        { role: 'tool', name: 'lookup', content: 'found 3' },
        { role: 'assistant', content: '<answer>3</answer>' },
      ]),
    );
    expect(t!.toolUse).toBe(true);
    expect(t!.steps[0]!.action).toBe('<tool_call>{"name":"lookup","arguments":{"q":1}}</tool_call>');
    expect(t!.steps[0]!.tool).toEqual({ calls: [{ name: 'lookup', arguments: { q: 1 }, block: '{"name":"lookup","arguments":{"q":1}}' }], outputs: ['found 3'] });
    expect(t!.steps[1]!.action).toBe('<answer>3</answer>');
    expect(t!.steps[1]!.tool).toBeUndefined();
  });
  it('refuses what is not a trajectory with a clear message', () => {
    expect(() => parseTrajectories('')).toThrow(/empty/);
    expect(() => parseTrajectories('{"a":1}')).toThrow(/messages/);
    expect(() => parseTrajectories('{"role":"user","content":"x"}\nnot json')).toThrow(/Line 2/);
  });
  it('derives file stems from names', () => {
    expect(candidateStems('runs/game_00000_015_logical_deduction_rollout.jsonl')).toContain('game_00000_015_logical_deduction');
  });
  it('reads action files as lines or JSON', () => {
    expect(parseActionsFile('a\n\n# c\n b ')).toEqual(['a', 'b']);
    expect(parseActionsFile('["x\\ny", "z"]')).toEqual(['x\ny', 'z']);
    expect(() => parseActionsFile('[1,2]')).toThrow(/array of strings/);
  });
});
