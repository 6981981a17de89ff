import { describe, expect, it } from 'vitest';
import { offersReplay, replayRecipe, stampEvidence } from '../../core/audit/evidence';
import type { EnvAudit } from '../../core/audit/types';

describe('the replay an evidence names', () => {
  it('reads reset-leak evidence as the episode (seed, actions) and the reset that shows the leak', () => {
    const r = replayRecipe({ id: 'reset-leak', evidence: { seed: 3, actions: ['\\boxed{1}'], resetSeed: 5, runtime: 'pyodide', mode: 'deterministic', maxTurns: 25 } });
    expect(r).toEqual({ seed: 3, actions: ['\\boxed{1}'], resetSeed: 5, runtime: 'pyodide', mode: 'deterministic', maxTurns: 25 });
  });

  it('reads evidence stored before it said so: firstSeed was the episode, seed the leaking reset; runtime from the stored audit', () => {
    const r = replayRecipe({ id: 'reset-leak', evidence: { seed: 5, firstSeed: 3, actions: [] } }, { runtime: 'pyodide' });
    expect(r).toMatchObject({ seed: 3, resetSeed: 5, runtime: 'pyodide', mode: 'deterministic', maxTurns: 30 });
    expect(replayRecipe({ id: 'solution', evidence: { seed: 1, actions: ['a'] } }, { runtime: null })).toMatchObject({ seed: 1, resetSeed: null, runtime: 'cpython', mode: 'spade' });
  });

  it('names no episode without an integer seed and string actions', () => {
    expect(replayRecipe({ id: 'seed-ignored', evidence: { seed: [0, 1, 2], actions: [] } })).toBeNull();
    expect(replayRecipe({ id: 'timing', evidence: { seed: 1 } })).toBeNull();
    expect(replayRecipe({ id: 'types', evidence: { seed: 1, actions: [1] } })).toBeNull();
    expect(offersReplay({ id: 'determinism', status: 'pass', evidence: { seed: 7, actions: [] } })).toBe(false);
    expect(offersReplay({ id: 'determinism', status: 'fail', evidence: { seed: 7, actions: [] } })).toBe(true);
  });

  it('stamps runtime, mode and budget on replayable evidence only', () => {
    const a: EnvAudit = {
      className: 'X',
      toolUse: false,
      elapsedMs: 1,
      checks: [
        { id: 'determinism', status: 'fail', message: '', evidence: { seed: 7, actions: ['a'] } },
        { id: 'seed-ignored', status: 'warn', message: '', evidence: { seed: [0, 1] } },
      ],
    };
    const s = stampEvidence(a, 'cpython', { maxTurns: 25 });
    expect(s.checks[0]!.evidence).toEqual({ seed: 7, actions: ['a'], runtime: 'cpython', mode: 'fresh', maxTurns: 25 });
    expect(s.checks[1]!.evidence).toEqual({ seed: [0, 1] });
  });
});
