import { describe, expect, it } from 'vitest';
import { STEP_INCREMENTS, fitRange, formatLogChunk, formatLogLine, stepTickLabels } from '../../renderer/src/features/jobs/logFormat';

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

  it("shows Slime's printed dicts (behind Ray's and Slime's prefixes) as the form, id and name/value pairs", () => {
    const line = "\x1b[36m(RolloutManager pid=48213)\x1b[0m [2026-11-30 10:06:00] rollout.py:1227 - perf 3: {'env/avg_regret': np.float64(0.5), 'rollout/mode': 'async', 'ok': np.True_}";
    expect(plain(formatLogLine(line))).toBe('(RolloutManager pid=48213) [2026-11-30 10:06:00] rollout.py:1227 - perf 3  env/avg_regret 0.500  rollout/mode async  ok true');
    expect(plain(formatLogLine("model.py:818 - step 3: {'train/loss': 0.25}"))).toBe("model.py:818 - step 3: {'train/loss': 0.25}");
    expect(plain(formatLogLine("(MegatronTrainRayActor pid=1) critic-step 2: {'train/critic-loss': 0.25}"))).toBe('(MegatronTrainRayActor pid=1) critic-step 2  train/critic-loss 0.250');
    // JSON as Python's json.dumps writes it (NaN) still reads.
    expect(plain(formatLogLine('{"step": 1, "env/avg_regret": NaN}'))).toBe('step 1  env/avg_regret NaN');
  });

  it('labels only whole-number steps', () => {
    expect(STEP_INCREMENTS.every((n) => Number.isInteger(n))).toBe(true);
    expect(stepTickLabels([1, 1.5, 2])).toEqual(['1', '', '2']);
  });

  it("fits a chart's y range to its data: a flat reward of 0 gets a small band, not 0..100", () => {
    const [lo, hi] = fitRange(0, 0);
    expect(lo).toBeLessThan(0);
    expect(hi).toBeGreaterThan(0);
    expect(hi - lo).toBeLessThanOrEqual(0.2);
    // A reward between 0.25 and 0.5: the range covers it and is not much wider.
    const [a, b] = fitRange(0.25, 0.5);
    expect(a).toBeLessThanOrEqual(0.25);
    expect(b).toBeGreaterThanOrEqual(0.5);
    expect(b - a).toBeLessThan(0.3);
    const [c, d] = fitRange(-2, -2);
    expect(c).toBeLessThan(-2);
    expect(d).toBeGreaterThan(-2);
    expect(fitRange(null, null)).toEqual([0, 1]);
  });
});
