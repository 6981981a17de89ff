import { describe, expect, it } from 'vitest';
import { decodeSource, detectKind, findClassName, normaliseSkill, parseGameStem, parseRejectedHeader, parseRejectedStem, rolloutFromPath, searchableName, skillFromSlug, skillSlug } from '../../core/memory/parse';
import { ftsQuery } from '../../core/memory/repository';

describe('reading SPADE names and sources', () => {
  it('picks the first class ending in Env, like SPADE loader does (helper classes first are the known trap)', () => {
    expect(findClassName('class Board:\n  pass\nclass GridEnv:\n  pass\nclass OtherEnv:\n  pass')).toBe('GridEnv');
    expect(findClassName('class HelperEnv:\n  pass\nclass GameEnv:\n  pass')).toBe('HelperEnv');
    expect(findClassName('class Env:\n  pass\nclass ToolUseBaseEnv:\n  pass')).toBeNull();
    expect(detectKind('class ShopEnv(ToolUseBaseEnv):\n  pass')).toBe('tool-use');
    expect(detectKind('class ShopEnv:\n  pass')).toBe('game');
  });

  it('parses game, rejected and cache names', () => {
    expect(parseGameStem('game_00042_007_multi_step_workflows')).toEqual({ rollout: 42, index: 7, skill: 'Multi-Step Workflows' });
    expect(parseGameStem('tooluse_001')).toBeNull();
    expect(parseRejectedStem('reject_00005_002_logical_deduction_exec')).toEqual({ rollout: 5, index: 2, attempt: null, skill: 'Logical Deduction', stage: 'exec' });
    expect(parseRejectedStem('reject_00005_002_pattern_recognition_too_easy')).toEqual({ rollout: 5, index: 2, attempt: null, skill: 'Pattern Recognition', stage: 'too_easy' });
    expect(parseRejectedStem('rej_r3_g1_a0_spatial_reasoning')).toEqual({ rollout: 3, index: 1, attempt: 0, skill: 'Spatial Reasoning', stage: null });
    expect(rolloutFromPath('/o/spade_games_cache/step_00012/game_00012_000_x.py')).toBe(12);
    expect(skillFromSlug('new_skill')).toBe('New Skill');
    expect(searchableName('MazeNavigatorEnv')).toBe('MazeNavigatorEnv Maze Navigator Env');
  });

  it("uses SPADE's slug (it keeps '-') and matches skills against the known list, never splitting on '_'", () => {
    expect(skillSlug('Multi-Step Workflows')).toBe('multi-step_workflows');
    expect(skillSlug('API Orchestration')).toBe('api_orchestration');
    expect(parseGameStem('game_00042_007_multi-step_workflows')).toEqual({ rollout: 42, index: 7, skill: 'Multi-Step Workflows' });
    expect(normaliseSkill('multi-step_workflows')).toBe('Multi-Step Workflows');
    expect(parseRejectedStem('reject_00004_001_multi-step_workflows_env_validator')).toEqual({ rollout: 4, index: 1, attempt: null, skill: 'Multi-Step Workflows', stage: 'env_validator' });
    expect(parseRejectedStem('reject_00004_001_multi-step_workflows_criteria_throw_at_reset')).toMatchObject({ skill: 'Multi-Step Workflows', stage: 'criteria_throw_at_reset' });
    // persist-rejected keeps the skill's case: `skill.replace(' ', '_')`.
    expect(parseRejectedStem('rej_r12_g3_a2_Multi-Step_Workflows')).toEqual({ rollout: 12, index: 3, attempt: 2, skill: 'Multi-Step Workflows', stage: null });
    expect(parseRejectedStem('rej_r1_g0_a1_API_Orchestration')).toMatchObject({ skill: 'API Orchestration', attempt: 1 });
    // An unknown skill: the known stages are matched as a suffix, so the stage keeps its underscores.
    expect(parseRejectedStem('reject_00002_000_graph_colouring_env_validator')).toMatchObject({ skill: 'Graph Colouring', stage: 'env_validator' });
  });

  it('reads the first line SPADE writes into a rejected game', () => {
    expect(parseRejectedHeader('# REJECTED (attempt 3): Game step() failed on action 1 \'\\boxed{1}\': boom\n\nclass AEnv:\n    pass\n')).toEqual({
      attempt: 3,
      error: "Game step() failed on action 1 '\\boxed{1}': boom",
      stage: null,
    });
    // The error may span lines; it runs to the blank line SPADE puts before the code.
    expect(parseRejectedHeader('# REJECTED (attempt 0): Traceback:\n  line 2\n\nclass AEnv: pass')).toEqual({ attempt: 0, error: 'Traceback:\n  line 2', stage: null });
    expect(parseRejectedHeader('"""SPADE self-play REJECTED game (stage=env_validator)"""\n\nclass AEnv: pass')).toEqual({ attempt: null, error: null, stage: 'env_validator' });
    expect(parseRejectedHeader('"""SPADE self-play generated game"""\nclass AEnv: pass')).toBeNull();
    expect(parseRejectedHeader('# REJECTED: no attempt\nclass AEnv: pass')).toBeNull();
  });

  it('refuses bytes that are not clean UTF-8 text', () => {
    expect(decodeSource(Buffer.from([0xc3, 0x28]), 100)).toEqual({ ok: false, reason: 'not valid UTF-8' });
    expect(decodeSource(Buffer.from('a\0b'), 100)).toEqual({ ok: false, reason: 'binary content (NUL bytes)' });
    expect(decodeSource(Buffer.alloc(0), 100)).toEqual({ ok: false, reason: 'empty file' });
    expect(decodeSource(Buffer.from('   \n'), 100)).toEqual({ ok: false, reason: 'empty file (only whitespace)' });
    expect(decodeSource(Buffer.alloc(101, 0x61), 100).ok).toBe(false);
    expect(decodeSource(Buffer.from('\ufeffclass AEnv: pass'), 100)).toEqual({ ok: true, text: 'class AEnv: pass' });
  });

  it('turns typed text into a safe FTS query with the last word as a prefix', () => {
    expect(ftsQuery('maze nav')).toBe('"maze"* "nav"*');
    expect(ftsQuery('a')).toBe('"a"');
    // An open quote is a phrase to the end: FTS syntax and SQL in it are words, never operators.
    expect(ftsQuery('"); DROP TABLE x; --')).toBe('"DROP TABLE x"');
    expect(ftsQuery('); DROP TABLE x --')).toBe('"DROP"* "TABLE"* "x"');
    // Punctuation inside a word makes a phrase (its words adjacent); the exact text is checked in SQL.
    expect(ftsQuery('random.Random(seed)')).toBe('"random Random seed"*');
    expect(ftsQuery('tag:audit-clean maze')).toBe('"maze"*');
    expect(ftsQuery('  ')).toBeNull();
  });
});
