import { afterAll, expect, test } from 'vitest';
import { PyodidePool } from '../../../core/runtime/pyodidePool';
import type { HarnessReply } from '../../../core/runtime/types';
import { ensureChildBuilt } from './helpers';

/**
 * Background work (a regret run's next session, loaded ahead of its turn) on a real Pyodide child:
 * it waits behind foreground requests, a session's own requests keep their order, and work that
 * an episode now waits on is brought forward.
 */
const SLOW = String.raw`import time
class SlowEnv:
    def reset(self, seed=None):
        return "ready", {}
    def step(self, action):
        if action == "slow":
            t = time.time()
            while time.time() - t < 0.3:
                pass
        return action, 0.0, False, False, {}
`;

ensureChildBuilt();
const pool = new PyodidePool({ size: 1 });
afterAll(() => pool.shutdown());

function ok(r: HarnessReply): any {
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  return r.result;
}

test('background requests wait behind the foreground, keep their session order, and come forward when promoted', async () => {
  ok(await pool.open('a', { cmd: 'load', source: SLOW }));
  ok(await pool.call('a', { cmd: 'reset' }));
  const done: string[] = [];
  const track = (name: string, p: Promise<HarnessReply>) => p.then((r) => (done.push(name), ok(r)));
  // The child is busy for 300 ms; everything below queues behind that step.
  const busy = track('a:slow', pool.call('a', { cmd: 'step', action: 'slow' }));
  await new Promise((r) => setTimeout(r, 50));
  const bLoad = track('b:load', pool.open('b', { cmd: 'load', source: SLOW }, 'background'));
  const a1 = track('a:1', pool.call('a', { cmd: 'step', action: '1' }));
  const a2 = track('a:2', pool.call('a', { cmd: 'step', action: '2' }));
  await Promise.all([busy, bLoad, a1, a2]);
  expect(done).toEqual(['a:slow', 'a:1', 'a:2', 'b:load']);

  // A foreground request of a session with background work waits behind that work (its order
  // holds); promoted, the session's work joins the foreground queue ahead of what comes after.
  done.length = 0;
  const busy2 = track('a:slow', pool.call('a', { cmd: 'step', action: 'slow' }));
  await new Promise((r) => setTimeout(r, 50));
  const bReset = track('b:reset', pool.call('b', { cmd: 'reset' }, undefined, 'background'));
  const bStep = track('b:x', pool.call('b', { cmd: 'step', action: 'x' }));
  pool.promote('b');
  const a3 = track('a:3', pool.call('a', { cmd: 'step', action: '3' }));
  await Promise.all([busy2, bReset, bStep, a3]);
  expect(done).toEqual(['a:slow', 'b:reset', 'b:x', 'a:3']);

  // Unpromoted, the same background work waits for the foreground.
  done.length = 0;
  const busy3 = track('a:slow', pool.call('a', { cmd: 'step', action: 'slow' }));
  await new Promise((r) => setTimeout(r, 50));
  const bReset2 = track('b:reset', pool.call('b', { cmd: 'reset' }, undefined, 'background'));
  const bStep2 = track('b:x', pool.call('b', { cmd: 'step', action: 'x' }));
  const a4 = track('a:4', pool.call('a', { cmd: 'step', action: '4' }));
  await Promise.all([busy3, bReset2, bStep2, a4]);
  expect(done).toEqual(['a:slow', 'a:4', 'b:reset', 'b:x']);
}, 60_000);
