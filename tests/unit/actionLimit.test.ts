import { expect, test } from 'vitest';
import { episodesCalls } from '../../core/api/calls/episodes';
import { runtimeCalls } from '../../core/api/calls/runtime';
import { MAX_ACTION_CHARS, MAX_ACTION_INPUT_CHARS } from '../../core/api/spadeRules';

// One action limit for every call (issue 45): SPADE cuts an action past MAX_ACTION_CHARS and plays
// it (spade/core/envs/synthetic_game_env.py:372-373), so no call may refuse one for being longer than
// that; MAX_ACTION_INPUT_CHARS bounds what any call takes in, the same for runtime and episodes.
const longer = 'x'.repeat(MAX_ACTION_CHARS + 50_000);
const tooLong = 'x'.repeat(MAX_ACTION_INPUT_CHARS + 1);

test('an action longer than SPADE cuts is taken by every call, and one past the bound by none', () => {
  const inputs = [
    (a: string) => runtimeCalls['runtime.step'].input.safeParse({ sessionId: 's', action: a }),
    (a: string) => runtimeCalls['runtime.play'].input.safeParse({ sessionId: 's', actions: [a] }),
    (a: string) => episodesCalls['episodes.act'].input.safeParse({ id: 1, action: a }),
  ];
  for (const parse of inputs) {
    expect(parse(longer).success).toBe(true);
    expect(parse(tooLong).success).toBe(false);
  }
});
