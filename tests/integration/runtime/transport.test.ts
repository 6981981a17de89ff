import { afterAll, describe, expect, test } from 'vitest';
import { PyodidePool } from '../../../core/runtime/pyodidePool';
import type { HarnessReply } from '../../../core/runtime/types';
import { ensureChildBuilt } from './helpers';

/**
 * The pipe between the pool and a Pyodide child, under the shapes that take its less common paths:
 * replies large enough to leave as bytes straight from WebAssembly memory, requests that arrive
 * while the child is polling (read synchronously, in pieces, with multi-byte characters split
 * across reads), and a child that never polls (one core).
 */
const ECHO = String.raw`class EchoEnv:
    def reset(self, seed=None):
        self.n = 0
        return "ready", {}
    def step(self, action):
        self.n += 1
        return f"{self.n}:{action}", 0.5, False, False, {"len": len(action)}
`;

// Every width of UTF-8 (1 to 4 bytes) so that read boundaries fall inside characters.
const WIDE = 'aé✓🙂';
const actionFor = (i: number): string => `${i}-${WIDE.repeat(1 + (i % 7))}`;

ensureChildBuilt();
const pools: PyodidePool[] = [];
afterAll(async () => {
  await Promise.all(pools.map((p) => p.shutdown()));
});

function ok(r: HarnessReply): any {
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  return r.result;
}

describe.each([
  { name: 'polling for the next request (multi-core default)', spinUs: 20_000 },
  { name: 'never polling (one core)', spinUs: 0 },
])('Pyodide child transport, $name', ({ spinUs }) => {
  const pool = new PyodidePool({ size: 1, spinUs });
  pools.push(pool);

  test('back-to-back steps and a large play come through whole and in order', async () => {
    ok(await pool.open('s1', { cmd: 'load', source: ECHO }));
    ok(await pool.call('s1', { cmd: 'reset' }));
    for (let i = 1; i <= 200; i++) {
      const r = ok(await pool.call('s1', { cmd: 'step', action: actionFor(i) }));
      expect(r.observation).toBe(`${i}:${actionFor(i)}`);
      expect(r.info).toEqual({ len: [...actionFor(i)].length }); // Python counts code points
    }
    // ~6,000 steps: a request of several pipe reads and a reply well past the bytes threshold.
    const actions = Array.from({ length: 6000 }, (_, i) => actionFor(i));
    const play = ok(await pool.call('s1', { cmd: 'play', seed: 3, actions, stopWhenDone: false }));
    expect(play.steps).toHaveLength(6000);
    play.steps.forEach((s: { observation: string }, i: number) => expect(s.observation).toBe(`${i + 1}:${actions[i]}`));
    // and the channel is still in step afterwards
    expect(ok(await pool.call('s1', { cmd: 'step', action: 'after' })).observation).toBe('6001:after');
  });

  test('one value larger than a pipe buffer (an observation cut at 100,000 characters)', async () => {
    const big = String.raw`class BigEnv:
    def reset(self, seed=None):
        return "🙂" * 150000, {"k": "é" * 70000}
    def step(self, action):
        return "x", 0.0, True, False, {}
`;
    ok(await pool.open('s2', { cmd: 'load', source: big }));
    const r = ok(await pool.call('s2', { cmd: 'reset' }));
    expect(r.observation.startsWith('🙂'.repeat(100_000))).toBe(true);
    expect(r.observation).toContain('[+50000 chars]');
    expect(r.info.k).toBe('é'.repeat(70_000));
  });
});
