import { describe, expect, it } from 'vitest';
import { STEP_INCREMENTS, formatLogChunk, formatLogLine, stepTickLabels } from '../../renderer/src/features/jobs/logFormat';

const plain = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');

describe('job log and chart formatting', () => {
  it('shows a metrics JSON line as step and name/value pairs, other lines unchanged', () => {
    const line = '{"rollout/step": 3, "rollout/mean_return": 0.4166666, "env/avg_regret": 0.25}';
    expect(plain(formatLogLine(line))).toBe('step 3  rollout/mean_return 0.417  env/avg_regret 0.250');
    expect(formatLogLine('rollout 3: game_00003_000 r_hint=0.5')).toBe('rollout 3: game_00003_000 r_hint=0.5');
    expect(formatLogLine('{not json}')).toBe('{not json}');
    expect(formatLogLine('[1, 2]')).toBe('[1, 2]');
    expect(plain(formatLogChunk('a\n{"x": 1}\nb'))).toBe('a\nmetrics  x 1\nb');
  });

  it('labels only whole-number steps', () => {
    expect(STEP_INCREMENTS.every((n) => Number.isInteger(n))).toBe(true);
    expect(stepTickLabels([1, 1.5, 2])).toEqual(['1', '', '2']);
  });
});
