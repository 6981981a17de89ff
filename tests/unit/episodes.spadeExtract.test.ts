import { describe, expect, it } from 'vitest';
import { boxedAnswer, extractAction } from '../../core/models/extract';

// Cases from SPADE-FORMATS section 2 (and SPADE's parsing module): each failed with the old extractor.
describe("SPADE's action extraction, rule by rule", () => {
  it('the first flat box wins over later ones', () => {
    expect(extractAction('a \\boxed{ 3 } b \\boxed{4}')).toBe('\\boxed{3}');
  });
  it('a doubled or tripled brace box is read when no flat box exists', () => {
    expect(extractAction('\\boxed{{5}}')).toBe('\\boxed{5}');
    expect(extractAction('\\boxed{{{ 6 }}}')).toBe('\\boxed{6}');
    // a flat box anywhere wins over an earlier doubled one (pattern order, not position)
    expect(extractAction('\\boxed{{5}} then \\boxed{7}')).toBe('\\boxed{7}');
  });
  it('nested braces: the LAST \\boxed with a balanced span, up to two outer pairs stripped', () => {
    expect(extractAction('\\boxed{\\frac{1}{2}} or \\boxed{\\sqrt{4}}')).toBe('\\boxed{\\sqrt{4}}');
    expect(boxedAnswer('\\boxed{{{{x}}}} ')).toBe('{x}');
    expect(boxedAnswer('\\boxed{{a}{b}}')).toBe('a}{b');
  });
  it('empty and unbalanced boxes give the stripped raw text', () => {
    expect(extractAction('  I give up \\boxed{}  ')).toBe('I give up \\boxed{}');
    expect(extractAction('\\boxed{  }')).toBe('\\boxed{  }');
    expect(extractAction(' \\boxed{abc ')).toBe('\\boxed{abc');
    expect(extractAction('\n  no box\t')).toBe('no box');
  });
  it('</think> is cut only in thinking mode, after the last one', () => {
    const t = '<think>\\boxed{1}</think>mid</think> \\boxed{2}';
    expect(extractAction(t)).toBe('\\boxed{1}');
    expect(extractAction(t, { thinking: true })).toBe('\\boxed{2}');
    expect(extractAction('<think>\\boxed{1}</think>', { thinking: true })).toBe('');
  });
});
