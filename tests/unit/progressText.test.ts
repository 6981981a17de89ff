import { describe, expect, it } from 'vitest';
import { remaining, seconds } from '../../renderer/src/components/progressText';

// Issue 31: "1 s left" stayed on screen for 30 s while the last audit of a batch hung. An estimate
// counts down from when it was given and, once spent, says the work takes longer instead of freezing.
describe('time left, as a progress line says it', () => {
  it('counts an estimate down between progress events', () => {
    expect(remaining(40, 0, 0)).toBe('about 40 s left');
    expect(remaining(40, 15, 15)).toBe('about 25 s left');
    expect(remaining(130, 0, 0)).toBe('about 2 min 10 s left');
    expect(remaining(null, 3, 3)).toBe('estimating…');
  });

  it('never shows a spent estimate as "1 s left"', () => {
    for (const age of [0.5, 1, 5, 30]) expect(remaining(1, age, age)).not.toMatch(/\b1 s left/);
    expect(remaining(1, 30, 30)).toBe('taking longer than estimated (last result 30 s ago)');
  });

  it('says durations in seconds and minutes', () => {
    expect(seconds(0.4)).toBe('0 s');
    expect(seconds(59.9)).toBe('59 s');
    expect(seconds(120)).toBe('2 min');
  });
});
