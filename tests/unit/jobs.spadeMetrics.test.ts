import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { metricsJson, parseLogText, parseMetricLine, parseRegretLine } from '../../core/jobs/metrics';
import { readPyLiteral } from '../../core/api/pyLiteral';
import { chartInfo, defaultChartKeys } from '../../core/api/spadeCharts';

// Written from SPADE's (9b2b813) and Slime's (bf14dc2) print statements; tests/fixtures/spade-logs/README.md
// names the line of their code each form comes from.
const FIX = join(__dirname, '..', 'fixtures', 'spade-logs');
const slimeLog = readFileSync(join(FIX, 'slime-run.log'), 'utf8');
const tinker = readFileSync(join(FIX, 'tinker-metrics.jsonl'), 'utf8');

describe("SPADE's and Slime's metric lines", () => {
  const m = (() => {
    const p = parseLogText(slimeLog);
    return metricsJson(p.points, p.games);
  })();

  it('reads every form behind Ray and Slime prefixes, each series on its own axis', () => {
    // SPADE's rollout metrics: slime/ray/rollout.py:1227, two rollouts merged under their ids.
    expect(m.series['env/avg_regret']).toEqual([[0, 0.5], [1, 0.25]]);
    expect(m.series['rollout/actor_win_rate']).toEqual([[0, 0.3125], [1, 0.5]]);
    expect(m.series['env_validation_pass_rate']).toEqual([[0, 0.75], [1, 1]]);
    expect(m.series['env/skill_Pattern_Recognition/actor_win_rate']).toEqual([[0, 0.3125], [1, 0.5]]);
    expect(m.series['delayed_env/blend_regret_mean']).toEqual([[1, 0.4375]]);
    expect(m.series['delayed_env/blend_micro_lp_mean']).toEqual([[1, -0.0625]]);
    // The second perf line (train_metric_utils.py:50) joins the first under the same rollout id.
    expect(m.series['perf/step_time']).toEqual([[0, 200], [1, 200]]);
    expect(m.series['perf/rollout_time']).toEqual([[0, 301.7], [1, 288.2]]);
    expect(m.series['perf/wait_time_ratio']).toEqual([[0, 0.0625], [1, 0.05]]);
    // Megatron's batch summary (data.py:206) is a series too, but not SPADE's metrics.
    expect(m.series['rollout/log_probs']).toEqual([[0, -0.4123]]);
    // step N: train/step axis (model.py:818); train/step itself is the axis, not a series.
    expect(m.series['train/loss']).toEqual([[0, 0.0123], [1, 0.0101], [2, 0.0087], [3, 0.0079]]);
    expect(m.series['train/grad_norm']!.map((p) => p[0])).toEqual([0, 1, 2, 3]);
    expect(m.series['train/step']).toBeUndefined();
    // eval N: eval/step axis (rollout.py:1206).
    expect(m.series['eval/aime']).toEqual([[2, 0.1333]]);
    expect(m.series['gem_eval/overall_win_rate']).toEqual([[2, 0.3125]]);
    const axisOf = (k: string) => m.axis[k];
    expect([axisOf('env/avg_regret'), axisOf('perf/step_time'), axisOf('rollout/log_probs')]).toEqual(['rollout/step', 'rollout/step', 'rollout/step']);
    expect([axisOf('train/loss'), axisOf('train/ppo_kl'), axisOf('train/lr-pg_0')]).toEqual(['train/step', 'train/step', 'train/step']);
    expect([axisOf('eval/aime'), axisOf('gem_eval/task_game_sudoku_v0/win_rate')]).toEqual(['eval/step', 'eval/step']);
    // Every key has an axis and every axis is one Slime logs under.
    expect(Object.keys(m.axis).sort()).toEqual(Object.keys(m.series).sort());
    expect(new Set(Object.values(m.axis))).toEqual(new Set(['rollout/step', 'train/step', 'eval/step']));
  });

  it('reads numpy 2 reprs, and a value that is not a number loses that value only', () => {
    expect(m.series['rollout/truncated_ratio']).toEqual([[0, 0.03125]]); // np.float32
    expect(m.series['rollout/num_actor_samples']).toEqual([[0, 64]]); // np.int64
    expect(m.series['rollout/all_zero_group_pct']).toEqual([[1, 1]]); // np.True_
    expect(m.series['rollout/mode']).toBeUndefined(); // 'async'
    expect(m.series['rollout/mean_return']).toEqual([[0, 0.0412]]); // np.float64(nan) at rollout 1 is left out
    const odd = parseMetricLine(
      "(RolloutManager pid=9) [2026-01-01 00:00:00] rollout.py:1227 - perf 4: {'a': __import__('os').system('id'), 'b': 1, 'c': array([1, 2]), 'd': <Foo object at 0x7f>, " +
        "'e': tensor(0.5, device='cuda:0', grad_fn=<MeanBackward0>), 'f': [1, bar], 'g': Decimal('0.5'), 'h': {'i': np.float64(2.5), 'j': x}, 'k': 3}",
    );
    expect(odd.map((p) => [p.key, p.value])).toEqual([['b', 1], ['e', 0.5], ['h/i', 2.5], ['k', 3]]);
    // A line cut before its closing brace keeps the pairs it had.
    expect(parseMetricLine("perf 5: {'a': 1, 'b': 2, 'c': np.float6").map((p) => p.key)).toEqual(['a', 'b']);
  });

  it('takes the forms only where a message starts, with or without colours and prefixes', () => {
    expect(parseMetricLine("\x1b[36m(RolloutManager pid=1, ip=10.0.0.2)\x1b[0m perf 3: {'x': 1}")).toEqual([{ axis: 'rollout/step', step: 3, key: 'x', value: 1 }]);
    expect(parseMetricLine("(MegatronTrainRayActor pid=2) [2026-01-01 00:00:00 rank0] model.py:818 - critic-step 9: {'train/critic-loss': 0.5, 'train/step': 9}")).toEqual([
      { axis: 'train/step', step: 9, key: 'train/critic-loss', value: 0.5 },
    ]);
    // A game's own print that merely contains the words is not a metrics line.
    expect(parseMetricLine("[2026-01-01 00:00:00] orchestrator.py:1 - game said perf 3: {'x': 1}")).toEqual([]);
  });

  it("gives each game's two returns from SPADE's [REGRET] lines", () => {
    expect(m.games).toEqual([
      { game: 'game_00000_000_pattern_recognition.py', r_hint: 0.875, r_no_hint: 0.25, regret: 0.625 },
      { game: 'game_00000_001_pattern_recognition.py', r_hint: 1, r_no_hint: 0.625, regret: 0.375 },
      { game: 'game_00000_002_pattern_recognition.py', r_hint: 0.562, r_no_hint: 0.062, regret: 0.5 },
    ]);
    expect(parseRegretLine('[REGRET] Hint generation failed for /x/game_00000_003.py: timeout')).toBeNull();
    expect(parseRegretLine('[REGRET] g.py: R(hint)=nan, R(no_hint)=0.250, regret=nan')).toEqual({ game: 'g.py', rHint: null, rNoHint: 0.25, regret: null });
    // A game flooding the log with look-alikes gets no game out of it (and one pass over the line).
    expect(parseRegretLine('[REGRET] a.py '.repeat(100_000))).toBeNull();
    expect(parseRegretLine('[REGRET] x.py: R(hint)=1.000, R(no_hint)=0.000, regret=1.000 [REGRET] y.py: ...')).toEqual({ game: 'x.py', rHint: 1, rNoHint: 0, regret: 1 });
  });

  it("reads Tinker's metrics.jsonl (json.dumps writes NaN) on its step axis", () => {
    const p = parseLogText(tinker);
    const t = metricsJson(p.points, p.games);
    expect(t.series['train/loss:sum']).toEqual([[0, 12.5], [1, 11.75]]);
    expect(t.series['env/avg_regret']).toEqual([[0, 0]]); // NaN at step 1 lost, nothing else
    expect(t.series['rollout/mean_return']).toEqual([[0, 0.125], [1, 0.25]]);
    expect(t.series['rollout/mode']).toBeUndefined();
    expect(t.series.step).toBeUndefined();
    expect(new Set(Object.values(t.axis))).toEqual(new Set(['step']));
  });

  it('opens with the charts the paper reports, saying what a misleading name means', () => {
    expect(defaultChartKeys(Object.keys(m.series))).toEqual([
      'rollout/actor_win_rate', 'env/avg_regret', 'env/avg_r_hint', 'env/avg_r_no_hint', 'env_validation_pass_rate',
      'delayed_env/blend_regret_mean', 'delayed_env/blend_micro_lp_mean', 'delayed_env/blend_win_rate_mean', 'delayed_env/blend_plateau_mean',
      'delayed_env/blend_frontier_penalty_mean', 'train/loss', 'train/ppo_kl', 'train/grad_norm', 'gem_eval/overall_win_rate', 'gem_eval/overall_mean_reward', 'eval/aime',
    ]);
    expect(chartInfo('env/skill_Pattern_Recognition/actor_win_rate').meaning).toMatch(/mean reward, not a share of wins/);
    expect(chartInfo('rollout/actor_win_rate').meaning).toMatch(/[Ss]hare of the actor's plays/);
  });

  it('reads JSON tokens and Python names alike, and evaluates nothing', () => {
    expect(readPyLiteral('{"a": NaN, "b": Infinity, "c": -Infinity, "d": true, "e": null}')!.value).toEqual({ a: NaN, b: Infinity, c: -Infinity, d: true, e: null });
    expect(readPyLiteral("{'a': np.False_, 'b': numpy.int64(3)}")!.value).toEqual({ a: false, b: 3 });
    expect(readPyLiteral("{'a': 1, 'b': open('/etc/passwd').read()}")!.value).toEqual({ a: 1 });
  });
});

describe("a Tinker run's metrics.jsonl as tinker-cookbook writes it", () => {
  // Written by running tinker-cookbook's own JsonLogger (ml_log.py at 2c87e8f, SPADE 9b2b813's submodule)
  // on SPADE's Tinker metric names: scripts/tinker-metrics-fixture.py, tests/fixtures/spade-logs/README.md.
  const text = readFileSync(join(FIX, 'tinker-cookbook-metrics.jsonl'), 'utf8');

  it('gives every numeric value of every line on the step axis, a NaN or a string losing only itself', () => {
    // What each line holds, read independently of the workbench's reader (NaN made null for JSON.parse).
    const expected = new Map<string, [number, number][]>();
    const lines = text.split('\n').filter(Boolean);
    expect(lines).toHaveLength(4);
    for (const line of lines) {
      const rec = JSON.parse(line.replace(/: NaN([,}])/g, ': null$1')) as Record<string, unknown>;
      for (const [k, v] of Object.entries(rec)) {
        if (k === 'step' || typeof v !== 'number') continue;
        if (!expected.has(k)) expected.set(k, []);
        expected.get(k)!.push([rec['step'] as number, v]);
      }
    }
    const p = parseLogText(text);
    const t = metricsJson(p.points, p.games);
    expect(t.series).toEqual(Object.fromEntries([...expected.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))));
    expect(Object.keys(t.series).length).toBeGreaterThan(40);
    expect(new Set(Object.values(t.axis))).toEqual(new Set(['step']));
    expect(t.series['actor/skill_Pattern_Recognition/avg_reward']!.map((x) => x[0])).toEqual([0, 2, 3]); // NaN at step 1
    expect(t.series['aime2024/pass@4']!.map((x) => x[0])).toEqual([0, 2]); // eval batches only
    expect(t.series['rollout/mode']).toBeUndefined();
    expect(t.games).toEqual([]);
  });

  it("opens with a Tinker run's own quantities, each saying what it is", () => {
    const p = parseLogText(text);
    const keys = Object.keys(metricsJson(p.points, p.games).series);
    expect(defaultChartKeys(keys)).toEqual([
      'train/loss:sum', 'avg_reward', 'rollout/actor_mean_return', 'rollout/env_mean_return', 'fixed_eval/overall_pass_rate', 'fixed_eval/difficulty_score', 'aime2024/pass@4', 'aime2025/pass@4',
    ]);
    expect(chartInfo('rollout/actor_mean_return').meaning).toMatch(/an advantage, not the actor's return/);
    expect(chartInfo('aime2025/pass@4').meaning).toMatch(/aime2025 problems solved by at least one of 4 samples/);
    expect(chartInfo('rollout/mean_return').meaning).toMatch(/spade\/tinker\/rollout\.py:227/);
  });
});
