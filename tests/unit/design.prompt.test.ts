import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyGame, designerPrompt, extractProgram, fillTemplate } from '../../core/design/prompt';
import { drawSeeds, formatSeeds, type MemoryRecord } from '../../core/design/seeds';

const rec = (envId: number, skill: string, winRate: number | null, regret: number | null): MemoryRecord => ({
  envId,
  name: `game_${envId}`,
  skill,
  winRate,
  regret,
  snippet: `class G${envId}Env: pass`,
  source: 'measured',
});

// Twelve Logical Deduction games in the band with regrets 0.12 .. 0.01, two outside it, one other skill.
const memory: MemoryRecord[] = [
  ...Array.from({ length: 12 }, (_, i) => rec(i + 1, 'Logical Deduction', 0.5, (12 - i) / 100)),
  rec(20, 'Logical Deduction', 0.95, 0.9),
  rec(21, 'Logical Deduction', 0.05, 0.9),
  rec(22, 'Optimization', 0.5, 0.99),
  rec(23, 'Logical Deduction', null, 0.5),
];

describe('drawSeeds (SPADE: same skill, win rate in [0.15, 0.85], top max(3n,10) by regret, n at random; one negative)', () => {
  it('draws positives only from the top ten by regret of the skill, inside the band', () => {
    const seen = new Set<number>();
    for (let seed = 0; seed < 200; seed++) {
      const d = drawSeeds(memory, { skill: 'Logical Deduction', seed });
      expect(d.positives).toHaveLength(2);
      expect(new Set(d.positives.map((r) => r.envId)).size).toBe(2);
      for (const r of d.positives) seen.add(r.envId!);
      expect(d.negatives).toHaveLength(1);
      expect([20, 21]).toContain(d.negatives[0]!.envId);
    }
    // Games 11 and 12 have the lowest regret of twelve: never in the pool of ten.
    expect([...seen].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('is repeatable by its seed, so a preview shows the prompt that is sent', () => {
    expect(drawSeeds(memory, { skill: 'Logical Deduction', seed: 7 })).toEqual(drawSeeds(memory, { skill: 'Logical Deduction', seed: 7 }));
  });

  it('offers pinned seeds first whatever their numbers, never banned ones, and has no fallback', () => {
    const d = drawSeeds(memory, { skill: 'Logical Deduction', seed: 1, pins: [22], bans: [1, 2, 3, 4, 5, 6, 7, 8, 9, 20, 21] });
    expect(d.positives[0]!.envId).toBe(22);
    expect(d.positives).toHaveLength(2);
    expect([10, 11, 12]).toContain(d.positives[1]!.envId);
    expect(d.negatives).toEqual([]);
    const none = drawSeeds(memory, { skill: 'Spatial Reasoning', seed: 1 });
    expect(none).toEqual({ positives: [], negatives: [] });
  });
});

describe('the designer prompt', () => {
  const template = readFileSync(join(__dirname, '../../resources/design/designer.txt'), 'utf8');

  it("fills the workbench's template and appends the seeds after it, as SPADE appends its memory", () => {
    const seeds = drawSeeds(memory, { skill: 'Logical Deduction', seed: 3 });
    const p = designerPrompt({ template, skill: 'Logical Deduction', difficulty: 'medium', maxTurns: 12, seeds });
    expect(p).toContain('trains an agent in Logical Deduction: drawing certain conclusions');
    expect(p).toContain('at least 3 well-chosen actions (difficulty: medium)');
    expect(p).toContain('__init__(self, max_turns=12');
    expect(p).not.toMatch(/\{\{/);
    expect(p.endsWith(formatSeeds(seeds))).toBe(true);
    expect(p.indexOf('<REFERENCE_ENVIRONMENTS>')).toBeGreaterThan(p.indexOf('```python fenced block'));
    expect(formatSeeds(seeds)).toMatch(/### Example 1 \(skill: Logical Deduction, win_rate: 0\.50, regret: 0\.\d\d\)\n```python\nclass G\d+Env: pass\n```/);
    expect(formatSeeds(seeds)).toMatch(/Avoid generating environments like:\n- too (easy|hard) \(win_rate=0\.\d\d\): class game_2[01]$/);
  });

  it('says which placeholders a user template uses that the workbench does not fill', () => {
    expect(() => fillTemplate('Make a {{skill}} game about {{topic}}.', { skill: 'x', skill_description: '', difficulty: '', min_steps: '', max_turns: '', document: '' })).toThrow(
      /uses \{\{topic\}\}, which the workbench does not fill/,
    );
  });
});

describe('extractProgram (SPADE: the first ```python block, else the whole answer)', () => {
  it('takes the first python block and nothing else', () => {
    expect(extractProgram('Here:\n```python\nclass AEnv: pass\n```\nand\n```python\nclass BEnv: pass\n```')).toEqual({ code: 'class AEnv: pass', from: 'python-fence' });
    expect(extractProgram('```py\nclass AEnv: pass\n```')).toEqual({ code: '```py\nclass AEnv: pass\n```', from: 'whole-answer' });
    expect(extractProgram('class AEnv: pass')).toEqual({ code: 'class AEnv: pass', from: 'whole-answer' });
  });
});

describe('classifyGame', () => {
  it('puts the frontier in SPADE\'s band and scores difficulty as its fixed-model evaluation does', () => {
    expect(classifyGame(0.9)).toEqual({ cls: 'too-easy', difficultyScore: expect.closeTo(0.2, 10) as unknown as number });
    expect(classifyGame(0.5)).toEqual({ cls: 'frontier', difficultyScore: 1 });
    expect(classifyGame(0.15).cls).toBe('frontier');
    expect(classifyGame(0.85).cls).toBe('frontier');
    expect(classifyGame(0.1)).toEqual({ cls: 'unsolvable', difficultyScore: expect.closeTo(0.2, 10) as unknown as number });
    expect(classifyGame(0).difficultyScore).toBe(0);
  });
});
