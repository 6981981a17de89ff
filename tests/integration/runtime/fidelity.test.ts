import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RuntimeService, RuntimeKind } from '../../../core/runtime/service';
import { probePython } from '../../../core/runtime/native';
import { packageRoot } from '../../../core/base/appInfo';
import { makeRuntime } from './helpers';

/**
 * Fidelity: every seed-pack environment, played with fixed action scripts (its own solution, and
 * unboxed / wrong actions before it), gives the same trace in Pyodide and in native CPython.
 * Iterates whatever files the seed pack has, so new environments are covered without edits here.
 */
const root = join(packageRoot(), 'resources', 'seed-pack');
const files = ['games', 'tool-use'].flatMap((dir) => {
  const d = join(root, dir);
  return existsSync(d) ? readdirSync(d).filter((f) => f.endsWith('.py')).sort().map((f) => join(d, f)) : [];
});

function needsNative(file: string): boolean {
  const spec = file.replace(/\.py$/, '.json');
  if (existsSync(spec)) {
    const needs = (JSON.parse(readFileSync(spec, 'utf8')) as { needs?: unknown }).needs;
    if (needs && JSON.stringify(needs).includes('numpy')) return true;
  }
  return /\bnp\.|import numpy/.test(readFileSync(file, 'utf8'));
}

let rt: RuntimeService;
beforeAll(async () => {
  rt = makeRuntime();
  await rt.pool.start();
});
afterAll(async () => {
  await rt.shutdown();
});

const SEEDS = [0, 1, 7];

/** The scripts: the game's own solution, and the same after an unboxed and a wrong action. */
async function scripts(kind: RuntimeKind, source: string, seed: number): Promise<string[][]> {
  const s = await rt.open({ source, runtime: kind });
  if (!s.ok) throw new Error(`load failed in ${kind}: ${s.error.message}`);
  const r = await rt.call(s.sessionId, { cmd: 'reset', seed });
  if (!r.ok) throw new Error(`reset failed in ${kind}: ${r.error.message}`);
  const sol = await rt.call(s.sessionId, { cmd: 'solution' });
  await rt.close(s.sessionId);
  if (!sol.ok) throw new Error(`solution failed in ${kind}: ${sol.error.message}`);
  const value = (sol.result as { value: unknown }).value;
  const solution = Array.isArray(value) ? value.map(String) : [`\\boxed{${String(value)}}`];
  const toolUse = solution.some((a) => a.includes('<tool_call>') || a.includes('<answer>'));
  const noise = toolUse ? ['I am not sure what to do.', '<answer>definitely wrong</answer>'] : ['my answer is 3', '\\boxed{definitely wrong}'];
  return [solution, [...noise, ...solution], ['\\boxed{1}', '\\boxed{test}', '\\boxed{42}']];
}

async function trace(kind: RuntimeKind, source: string, seed: number, actions: string[]): Promise<unknown> {
  const s = await rt.open({ source, runtime: kind });
  if (!s.ok) return { loadError: s.error.message };
  const r = await rt.call(s.sessionId, { cmd: 'play', seed, actions, state: true });
  await rt.close(s.sessionId);
  if (!r.ok) return { error: r.error.kind };
  return r.result;
}

describe.runIf(probePython() && files.length > 0)('Pyodide and native CPython give identical traces', () => {
  const portable = files.filter((f) => !needsNative(f));
  test.each(portable.map((f) => [f.slice(root.length + 1), f]))('%s', async (_name, file) => {
    const source = readFileSync(file, 'utf8');
    let won = 0;
    for (const seed of SEEDS) {
      const fromPy = await scripts('pyodide', source, seed);
      const fromNative = await scripts('cpython', source, seed);
      expect(fromPy).toEqual(fromNative);
      for (const actions of fromPy) {
        const a = await trace('pyodide', source, seed, actions);
        const b = await trace('cpython', source, seed, actions);
        expect(a).toEqual(b);
        const steps = (a as { steps?: { reward?: unknown }[] }).steps ?? [];
        if (steps.some((x) => x.reward === 1)) won++;
      }
    }
    // The traces compared must be real episodes, not two identical failures.
    const spec = file.replace(/\.py$/, '.json');
    const unwinnable = existsSync(spec) && /unwinnable/.test(readFileSync(spec, 'utf8'));
    if (!unwinnable) expect(won).toBeGreaterThan(0);
  });

  test('numpy games run natively under auto', async () => {
    for (const f of files.filter(needsNative)) {
      const s = await rt.open({ source: readFileSync(f, 'utf8'), runtime: 'auto' });
      expect(s.ok && s.runtime).toBe('cpython');
      if (s.ok) await rt.close(s.sessionId);
    }
  });
});

/**
 * Issue 46's held-out shapes (tests/fixtures/spade-corpus l30-l34, g05): games SPADE refuses at every
 * play load though a naive player wins them, and a numpy default_rng(seed) game. Both runtimes give
 * SPADE's verdict with SPADE's message (checked against SPADE's code, corpus README), and the same
 * trace where the game loads.
 */
const CORPUS = join(__dirname, '..', '..', 'fixtures', 'spade-corpus');
const SHAPES = ['l30_refused_reward_float32', 'l31_refused_reset_info_none', 'l32_refused_truncated_int', 'l33_refused_reset_returns_none', 'l34_refused_terminated_int', 'g05_numpy_default_rng'];

describe.runIf(probePython())("issue 46's shapes: SPADE's load verdict in both runtimes", () => {
  test.each(SHAPES)('%s', async (name) => {
    const source = readFileSync(join(CORPUS, `${name}.py`), 'utf8');
    const expected = JSON.parse(readFileSync(join(CORPUS, `${name}.expected.json`), 'utf8')) as { seed: number; load: { ok: boolean; message: string | null }; reset?: { observation: string | null } };
    const actions = JSON.parse(readFileSync(join(CORPUS, `${name}.actions.json`), 'utf8')) as string[];
    const kinds: RuntimeKind[] = needsNative(join(CORPUS, `${name}.py`)) ? ['cpython'] : ['pyodide', 'cpython'];
    const traces: unknown[] = [];
    for (const kind of kinds) {
      const s = await rt.open({ source, runtime: kind });
      if (!s.ok) throw new Error(`load failed in ${kind}: ${s.error.message}`);
      expect(s.load.validation).toEqual({ ok: expected.load.ok, message: expected.load.message, stage: expected.load.ok ? null : expect.any(String) });
      await rt.close(s.sessionId);
      const t = (await trace(kind, source, expected.seed, actions)) as { reset?: { spade?: { observation?: string } } };
      // A loading game's seeded reset is SPADE's (numpy 2's default_rng(seed) included), not "Error during reset".
      if (expected.load.ok && expected.reset?.observation) expect(t.reset?.spade?.observation).toBe(expected.reset.observation);
      traces.push(t);
    }
    if (traces.length === 2) expect(traces[0]).toEqual(traces[1]);
  });
});
