import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { feedFromSource, scriptSource, solutionActions } from '../../core/episodes/policy';
import { remotePlans } from '../../core/episodes/regretRemote';
import type { PlanItem } from '../../core/episodes/rollout';

// The solution() policy's texts are made twice: here (policy.ts solutionActions) for local runs and
// on a cluster node (native/dispatch/shard_regret.py) for regret sweeps. Both must give the same
// actions for the same value, JavaScript's number and key order included; a difference would show
// as a diverged episode in a sweep, and shows here first.
const values: unknown[] = [
  42, 1.5, 1e-7, 1e21, 2 ** 60, 123456789012345680000, -0.5, 0, true, null, 'B', 'say \\boxed{7}', '<answer>8</answer>',
  [1, 'x', [2, 3]], { b: 1, 2: 'two', 1: [0.1, 1e300], a: { z: null } }, 'naïve "quoted"\n\ttab', [],
  '<tool_call>{"name": "lookup", "arguments": {"item": "apple"}}</tool_call>',
];

function python(values: unknown[], toolUse: boolean): unknown[] {
  const code = 'import json, sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]; import shard_regret as m; vs = json.loads(sys.stdin.read()); print(json.dumps([m.plan_of(m.solution_texts(v), sys.argv[3] == "1") for v in vs]))';
  const native = join(__dirname, '..', '..', 'native');
  const r = spawnSync('python3', ['-c', code, join(native, 'dispatch'), native, toolUse ? '1' : '0'], { input: JSON.stringify(values), encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as unknown[];
}

function local(value: unknown, toolUse: boolean): unknown[] {
  const feed = feedFromSource(scriptSource(solutionActions(value), false, toolUse), toolUse);
  const out: unknown[] = [];
  for (let it = feed.next(null) as PlanItem | null; it; it = feed.next(null) as PlanItem | null) {
    out.push(it.kind === 'tool' ? { kind: 'tool', calls: it.calls } : it.kind === 'step' ? { kind: 'step', action: it.action } : it);
  }
  return out;
}

describe('regret sweeps: the node plays what this workbench plays', () => {
  for (const toolUse of [false, true]) {
    it(`solution() values become the same actions on the node (${toolUse ? 'tool-use' : 'plain'} game)`, () => {
      const JSONed = values.map((v) => JSON.parse(JSON.stringify(v)) as unknown);
      expect(python(JSONed, toolUse)).toEqual(JSONed.map((v) => local(v, toolUse)));
    });
  }

  it('a script or a random policy is sent as its items, one past the budget; solution() as none', () => {
    expect(remotePlans({ kind: 'solution' }, 3, 5)).toBeNull();
    const r = remotePlans({ kind: 'random', lo: 1, hi: 100 }, 3, 5)!;
    expect(r.plain).toHaveLength(6);
    expect(r.plain).toEqual(r.tool);
    expect(remotePlans({ kind: 'random', lo: 1, hi: 100 }, 4, 5)!.plain).not.toEqual(r.plain);
    const s = remotePlans({ kind: 'script', actions: ['so \\boxed{ 7 }', '<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>'], extract: true }, 0, 30)!;
    expect(s.plain).toEqual([{ kind: 'step', action: '\\boxed{7}' }, { kind: 'step', action: '<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>' }]);
    expect(s.tool).toEqual([{ kind: 'step', action: 'so \\boxed{ 7 }' }, { kind: 'tool', calls: [{ name: 'f', arguments: { x: 1 }, block: '{"name": "f", "arguments": {"x": 1}}' }] }]);
  });
});
