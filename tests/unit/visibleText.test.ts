import { describe, expect, it } from 'vitest';
import { splitControls, visibleText } from '../../renderer/src/components/visibleText';

// Issue 46: a right-to-left override in a hint reversed the text shown; untrusted text now shows
// its control characters as named tokens instead of applying them.
describe('control characters in untrusted text', () => {
  it('names bidi overrides, isolates and marks instead of applying them', () => {
    expect(visibleText('pick \u202E7 then 8')).toBe('pick ⟦RLO⟧7 then 8');
    expect(visibleText('\u2066a\u2069\u200F')).toBe('⟦LRI⟧a⟦PDI⟧⟦RLM⟧');
  });

  it('shows invisible and C0/C1 control characters, keeps tabs, newlines and ordinary text', () => {
    expect(visibleText('a\u200Bb\u0000c\u009Bd\uFEFF')).toBe('a⟦ZWSP⟧b⟦NUL⟧c⟦U+009B⟧d⟦BOM⟧');
    expect(visibleText('line 1\n\tline 2 — ünïcode ✓ 日本')).toBe('line 1\n\tline 2 — ünïcode ✓ 日本');
    // Tag characters (invisible, outside the BMP) are named one by one.
    expect(visibleText('x\u{E0041}y')).toBe('x⟦U+E0041⟧y');
  });

  it('splits into text runs and controls, the controls at odd indexes', () => {
    expect(splitControls('a\u202Eb\u202Cc')).toEqual(['a', '\u202E', 'b', '\u202C', 'c']);
    expect(splitControls('plain')).toEqual(['plain']);
  });
});
