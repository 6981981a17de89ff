import { describe, expect, it } from 'vitest';
import { regretBins } from '../../renderer/src/features/regret/bins';

describe('regretBins (the regret chart of a sweep)', () => {
  it('counts each environment once, in the quarter its regret rounds to, over at least [-1, 1]', () => {
    const b = regretBins([0, 0, 0.5, -0.25, 0.9, -1]);
    expect(b.centers).toEqual([-1, -0.75, -0.5, -0.25, 0, 0.25, 0.5, 0.75, 1]);
    expect(b.counts).toEqual([1, 0, 0, 1, 2, 0, 1, 0, 1]);
  });

  it('widens for a regret outside [-1, 1] (returns of -1 and 1) and leaves out what is not a number', () => {
    const b = regretBins([2, -1.5, Number.NaN]);
    expect(b.lo).toBe(-1.5);
    expect(b.hi).toBe(2);
    expect(b.counts.reduce((a, c) => a + c, 0)).toBe(2);
    expect(b.counts[0]).toBe(1);
    expect(b.counts[b.counts.length - 1]).toBe(1);
  });
});
