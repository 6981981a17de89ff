import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RuntimeService } from '../../../core/runtime/service';
import { probePython } from '../../../core/runtime/native';
import { makeRuntime } from './helpers';

/**
 * A seeded reset in SPADE mode notes which generators the game seeds (seedIgnored) by watching
 * random's and numpy.random's seeding names for the call. It must change nothing the game can see:
 * numpy 2's default_rng(seed) asks isinstance(seed, np.random.RandomState) through the module, and
 * a plain function standing in for the class raised TypeError ("Error during reset") in a valid game.
 * SPADE allows numpy >= 1.24: SPADE_TEST_NUMPY1_PYTHON names a numpy-1 interpreter to run the same
 * game under (skipped without it); the workbench's own venv has numpy 2.
 */
const numpy1 = process.env.SPADE_TEST_NUMPY1_PYTHON;
if (numpy1) process.env.SPADE_PYTHON = numpy1;

const GAME = String.raw`import numpy as np
import random

class WatchedEnv:
    def reset(self, seed=None):
        rng = np.random.default_rng(seed)
        legacy = np.random.RandomState(seed)
        checks = [
            isinstance(rng, np.random.Generator),
            isinstance(legacy, np.random.RandomState),
            issubclass(type(legacy), np.random.RandomState),
            type(legacy) == np.random.RandomState,
            np.random.RandomState.__name__ == "RandomState",
            np.random.default_rng.__name__ == "default_rng",
            isinstance(np.random.default_rng(rng), np.random.Generator),
        ]
        class Mine(np.random.RandomState):
            pass
        checks.append(isinstance(Mine(1), np.random.RandomState))
        random.Random(seed)
        self.n = int(rng.integers(0, 10**9))
        return "%s %s %d" % (np.__version__.split(".")[0], all(checks), self.n), {}

    def step(self, a):
        return "o", 0.0, True, False, {}
`;

let rt: RuntimeService;
beforeAll(() => {
  rt = makeRuntime();
});
afterAll(async () => {
  await rt.shutdown();
});

const py = probePython();
const expectedMajor = numpy1 ? '1' : '2';

describe.skipIf(!py?.numpy)(`seeded resets under numpy ${expectedMajor} (SPADE mode)`, () => {
  test('default_rng, RandomState, isinstance and subclassing behave as without the watch; the seeding is noted', async () => {
    const o = await rt.open({ source: GAME, runtime: 'cpython' });
    if (!o.ok) throw new Error(`load failed: ${JSON.stringify(o.error)}`);
    expect(o.load.validation?.ok).toBe(true);
    const r = await rt.call(o.sessionId, { cmd: 'reset', seed: 5 });
    await rt.close(o.sessionId);
    if (!r.ok) throw new Error(`reset failed: ${JSON.stringify(r.error)}`);
    const res = r.result as { observation: string; seeded?: string[]; seedIgnored?: boolean };
    // The draw is numpy's own default_rng(5), as SPADE's process makes it.
    const want = execFileSync(py!.path, ['-c', 'import numpy as np; print(np.__version__.split(".")[0], True, int(np.random.default_rng(5).integers(0, 10**9)))'], { encoding: 'utf8' }).trim();
    expect(res.observation).toBe(want);
    expect(res.observation.startsWith(`${expectedMajor} True `)).toBe(true);
    expect(res.seeded).toEqual(['numpy.random.RandomState', 'numpy.random.default_rng', 'random.Random']);
    expect(res.seedIgnored).toBeUndefined();
  });
});
