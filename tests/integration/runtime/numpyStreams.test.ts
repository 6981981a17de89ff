import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RuntimeService } from '../../../core/runtime/service';
import { probePython } from '../../../core/runtime/native';
import { makeRuntime } from './helpers';

/**
 * Every native session is forked from one server, and numpy's global generator is part of what a
 * fork copies: unless it is reseeded from the OS for each child, every session would deal the same
 * "random" stream (SPADE's one long process never repeats a stream). The server reseeds just
 * before each fork; these sessions must all draw differently.
 */
const NUMPY_GAME = `import numpy as np\nclass NEnv:\n    def reset(self, seed=None):\n        return " ".join(str(x) for x in np.random.randint(0, 10**9, size=4)), {}\n    def step(self, a):\n        return "o", 0.0, True, False, {}\n`;

let rt: RuntimeService;
beforeAll(async () => {
  rt = makeRuntime();
});
afterAll(async () => {
  await rt.shutdown();
});

describe.skipIf(!probePython())('numpy streams of native sessions', () => {
  test('sessions forked one after another draw different numpy streams', async () => {
    const draws: string[] = [];
    for (let i = 0; i < 4; i++) {
      const o = await rt.open({ source: NUMPY_GAME, runtime: 'cpython' });
      if (!o.ok) throw new Error(`load failed: ${JSON.stringify(o.error)}`);
      const r = await rt.call(o.sessionId, { cmd: 'reset' });
      if (!r.ok) throw new Error(`reset failed: ${JSON.stringify(r.error)}`);
      draws.push((r.result as { observation: string }).observation);
      await rt.close(o.sessionId);
    }
    expect(new Set(draws).size).toBe(draws.length);
  });
});
