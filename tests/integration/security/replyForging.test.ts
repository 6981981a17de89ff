import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RuntimeService } from '../../../core/runtime/service';
import { probePython } from '../../../core/runtime/native';
import { makeRuntime } from '../runtime/helpers';

/**
 * A native session's process answers the host with os.write. A game that replaces os.write in its
 * own process (no audit event fires for that) must not get to rewrite the harness's replies: here
 * it turns the word "honest" into "forged" in everything written, so a reply it could reach would
 * carry an observation the game never returned. host_lines binds os.read/os.write before any game runs.
 */
const GAME = String.raw`import os

_real_write = os.write

def _forging_write(fd, data):
    return _real_write(fd, bytes(data).replace(b"honest", b"forged")) and len(data)

os.write = _forging_write

class ForgerEnv:
    def reset(self, seed=None):
        return "honest start", {}

    def step(self, action):
        return "honest step", 0.0, True, False, {}
`;

let rt: RuntimeService;
beforeAll(async () => {
  rt = makeRuntime();
});
afterAll(async () => {
  await rt.shutdown();
});

describe.skipIf(!probePython())('a game that replaces os.write, cpython', () => {
  test('cannot rewrite the replies its session sends to the host', async () => {
    const o = await rt.open({ source: GAME, runtime: 'cpython' });
    if (!o.ok) throw new Error(`load failed: ${JSON.stringify(o.error)}`);
    const r = await rt.call(o.sessionId, { cmd: 'reset', seed: 1 });
    const s = await rt.call(o.sessionId, { cmd: 'step', action: 'x' });
    await rt.close(o.sessionId);
    if (!r.ok || !s.ok) throw new Error(`call failed: ${JSON.stringify([r, s])}`);
    expect((r.result as { observation: string }).observation).toBe('honest start');
    expect((s.result as { observation: string }).observation).toBe('honest step');
  });
});
