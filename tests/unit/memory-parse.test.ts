import { describe, expect, it } from 'vitest';
import { decodeSource, detectKind, findClassName, parseGameStem, parseRejectedStem, rolloutFromPath, searchableName, skillFromSlug } from '../../core/memory/parse';
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
    expect(parseRejectedStem('reject_00005_002_logical_deduction_exec')).toEqual({ rollout: 5, skill: 'Logical Deduction', stage: 'exec' });
    expect(parseRejectedStem('reject_00005_002_pattern_recognition_too_easy')).toEqual({ rollout: 5, skill: 'Pattern Recognition', stage: 'too_easy' });
    expect(parseRejectedStem('rej_r3_g1_a0_spatial_reasoning')).toEqual({ rollout: 3, skill: 'Spatial Reasoning', stage: null });
    expect(rolloutFromPath('/o/spade_games_cache/step_00012/game_00012_000_x.py')).toBe(12);
    expect(skillFromSlug('new_skill')).toBe('New Skill');
    expect(searchableName('MazeNavigatorEnv')).toBe('MazeNavigatorEnv Maze Navigator Env');
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
    expect(ftsQuery('"); DROP TABLE x; --')).toBe('"DROP"* "TABLE"* "x"');
    expect(ftsQuery('  ')).toBeNull();
  });
});
