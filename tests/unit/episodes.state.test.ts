import { describe, expect, it } from 'vitest';
import { diffLines, diffStates, type StateTree } from '../../core/episodes/stateDiff';
import { evaluate, parseCondition } from '../../core/episodes/until';
import { randomSource, solutionActions } from '../../core/episodes/policy';

const int = (v: number) => ({ t: 'int', v });
const s1: StateTree = {
  className: 'G',
  fields: [
    ['turn', int(1)],
    ['pos', { t: 'tuple', len: 2, items: [int(0), int(1)] }],
    ['asked', { t: 'list', len: 1, items: [{ t: 'tuple', len: 2, items: [int(3), int(4)] }] }],
    ['meta', { t: 'dict', len: 1, items: [['k', { t: 'str', v: 'a' }]] }],
    ['secret', { t: 'str', v: '23' }],
  ],
};
const s2: StateTree = {
  className: 'G',
  fields: [
    ['turn', int(2)],
    ['pos', { t: 'tuple', len: 2, items: [int(0), int(1)] }],
    ['asked', { t: 'list', len: 2, items: [{ t: 'tuple', len: 2, items: [int(3), int(4)] }, { t: 'tuple', len: 2, items: [int(5), int(6)] }] }],
    ['meta', { t: 'dict', len: 1, items: [['k', { t: 'str', v: 'b' }]] }],
    ['secret', int(23)],
    ['extra', int(1)],
  ],
};

describe('state diff', () => {
  it('lists changed, added and retyped fields by path; unchanged ones are absent', () => {
    const d = diffStates(s1, s2);
    const byPath = Object.fromEntries(d.map((c) => [c.path, c]));
    expect(byPath.turn).toMatchObject({ kind: 'changed', before: '1', after: '2' });
    expect(byPath.asked).toMatchObject({ kind: 'changed' });
    expect(byPath['asked[1]']).toMatchObject({ kind: 'added', after: '(5, 6)' });
    expect(byPath['meta["k"]']).toMatchObject({ before: '"a"', after: '"b"' });
    expect(byPath.secret!.before).toContain('(str)');
    expect(byPath.extra!.kind).toBe('added');
    expect(byPath.pos).toBeUndefined();
    expect(diffStates(s1, s1)).toEqual([]);
  });
  it('diffs class attributes and module globals under the names the state tree shows', () => {
    const a: StateTree = { ...s1, className: 'Env', classFields: [['seen', { t: 'list', len: 1, items: [int(3)] }]], moduleGlobals: [['ROUNDS', int(1)]] };
    const b: StateTree = { ...s1, className: 'Env', classFields: [['seen', { t: 'list', len: 2, items: [int(3), int(5)] }]], moduleGlobals: [['ROUNDS', int(2)]] };
    expect(diffStates(a, b).map((c) => c.path)).toEqual(['Env.seen', 'Env.seen[1]', 'globals.ROUNDS']);
    expect(diffStates(a, a)).toEqual([]);
    // a state without the groups (an older recording) against one with them: the groups appear as added
    expect(diffStates(s1, b).filter((c) => c.path.startsWith('Env.') || c.path.startsWith('globals.')).map((c) => c.kind)).toEqual(['added', 'added']);
  });
  it('line diff marks removed and added lines', () => {
    expect(diffLines('a\nb\nc', 'a\nx\nc')).toEqual([
      { op: '=', text: 'a' },
      { op: '-', text: 'b' },
      { op: '+', text: 'x' },
      { op: '=', text: 'c' },
    ]);
  });
});

describe('run-until conditions', () => {
  it('evaluates comparisons, len(), tuples and membership', () => {
    expect(evaluate(parseCondition('turn >= 2'), s2)).toBe(true);
    expect(evaluate(parseCondition('turn >= 2'), s1)).toBe(false);
    expect(evaluate(parseCondition('len(asked) > 1'), s2)).toBe(true);
    expect(evaluate(parseCondition('pos == (0, 1)'), s1)).toBe(true);
    expect(evaluate(parseCondition("meta['k'] == 'b'"), s2)).toBe(true);
    expect(evaluate(parseCondition('asked[-1][0] == 5'), s2)).toBe(true);
    expect(evaluate(parseCondition('turn in [1, 3]'), s1)).toBe(true);
    expect(evaluate(parseCondition('nothing == 1'), s1)).toBe(false);
  });
  it('rejects malformed conditions with a message', () => {
    expect(() => parseCondition('turn')).toThrow(/condition looks like/);
    expect(() => parseCondition('turn == __import__("os")')).toThrow(/Cannot read the value/);
  });
});

describe('policies', () => {
  it('random guesses replay identically for a seed and stay in range', () => {
    const a = randomSource(5, 1, 100);
    const b = randomSource(5, 1, 100);
    const xs = Array.from({ length: 50 }, () => a.next()!.action);
    expect(Array.from({ length: 50 }, () => b.next()!.action)).toEqual(xs);
    expect(xs.every((x) => /^\\boxed\{(\d+)\}$/.test(x) && +x.slice(7, -1) >= 1 && +x.slice(7, -1) <= 100)).toBe(true);
  });
  it('solution() values become boxed actions', () => {
    expect(solutionActions(42)).toEqual(['\\boxed{42}']);
    expect(solutionActions(['\\boxed{up}', 'left'])).toEqual(['\\boxed{up}', '\\boxed{left}']);
  });
});
