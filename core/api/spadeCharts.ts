/**
 * The charts a job view opens with: the quantities SPADE's paper reports and its designer is
 * trained on, each with what the number is in SPADE's code where its name says something else.
 * Every definition names the line of SPADE (9b2b813) or Slime (bf14dc2) that computes it.
 */
export interface ChartInfo {
  /** The metric key, or a pattern of keys (eval curves, per-skill series). */
  key: string;
  title: string;
  /** What the number is, in SPADE's code; shown under the chart. */
  meaning: string;
  /** Not a default where the run has this key (a Slime run's actor win rate stands in for the Tinker chart). */
  unlessKey?: string;
}

/** Default charts, in the order shown (a key missing from the run is not shown). */
export const DEFAULT_CHARTS: ChartInfo[] = [
  {
    key: 'rollout/actor_win_rate',
    title: 'Actor win rate',
    meaning: "Share of the actor's plays in this rollout whose (pre-normalisation) reward is above 0 (spade/slime/spade_rollout.py:759).",
  },
  {
    key: 'env/avg_regret',
    title: 'Regret',
    meaning: "Mean over this rollout's designer games of R(hint) − R(no hint), raw (it may be negative) (spade/core/utils/env_rewards.py:294).",
  },
  { key: 'env/avg_r_hint', title: 'R(hint)', meaning: 'Mean return of the hinted plays, over the games with a hint (env_rewards.py:297).' },
  { key: 'env/avg_r_no_hint', title: 'R(no hint)', meaning: 'Mean return of the unhinted actor plays, over the games with a hint (env_rewards.py:300).' },
  {
    key: 'env_validation_pass_rate',
    title: 'Validation pass rate',
    meaning: 'New games that passed validation ÷ games asked for this rollout (spade/core/orchestrator.py:2333).',
  },
  { key: 'delayed_env/blend_regret_mean', title: 'Blend: regret term', meaning: 'Mean matched-timing regret (R(hint) − R(no hint) at the regeneration step) over the blend\'s games (spade/core/utils/delayed_env_rewards.py:539).' },
  { key: 'delayed_env/blend_micro_lp_mean', title: 'Blend: micro learning progress', meaning: "Mean change of the actor's win rate on a game over the delay window (delayed_env_rewards.py:541)." },
  {
    key: 'delayed_env/blend_win_rate_mean',
    title: 'Blend: window win rate',
    meaning: "Mean over games of the actor's mean reward across the delay window (a mean reward, not a share of wins; delayed_env_rewards.py:543).",
  },
  { key: 'delayed_env/blend_plateau_mean', title: 'Blend: plateau term', meaning: 'Mean flat-top difficulty reward, 1 in the win-rate band (PLATEAU_LO..HI) and 0 at the extremes (delayed_env_rewards.py:557).' },
  { key: 'delayed_env/blend_frontier_penalty_mean', title: 'Blend: frontier penalty', meaning: 'Mean (window win rate − 0.5)² (delayed_env_rewards.py:544).' },
  { key: 'train/loss', title: 'Train loss', meaning: "Megatron's policy loss for one train step (slime/backends/megatron_utils/model.py:785)." },
  { key: 'train/loss:sum', title: 'Train loss (Tinker)', meaning: "Tinker's forward-backward loss, summed (spade/tinker/train_step.py:115)." },
  { key: 'train/ppo_kl', title: 'KL (PPO)', meaning: "PPO's approximate KL between the rollout policy and the policy being trained, per train step (Slime's loss, printed by model.py:818)." },
  { key: 'train/kl_loss', title: 'KL loss', meaning: 'KL to the reference model, when the run uses a KL loss (Slime).' },
  { key: 'train/post_kl', title: 'KL after the step (Tinker)', meaning: 'KL between the sampling and the updated policy (spade/tinker/train_step.py:110).' },
  { key: 'train/grad_norm', title: 'Grad norm', meaning: 'Gradient norm of the train step (model.py:789).' },
  { key: 'gem_eval/overall_win_rate', title: 'GEM eval: win rate', meaning: 'Share of GEM evaluation episodes won (spade/core/eval/gem_evaluator.py:61).' },
  { key: 'gem_eval/overall_mean_reward', title: 'GEM eval: mean reward', meaning: 'Mean reward over the GEM evaluation episodes (gem_evaluator.py:62).' },
  // A Tinker run's metrics.jsonl (train_spade_tinker.py:265 through tinker-cookbook's JsonLogger, x axis `step` = the batch).
  {
    key: 'avg_reward',
    title: 'Actor mean reward (Tinker)',
    meaning: 'Mean raw reward of every actor play in the batch, before any normalisation (spade/core/orchestrator.py:1629, play_games_async).',
    unlessKey: 'rollout/actor_win_rate',
  },
  {
    key: 'rollout/actor_mean_return',
    title: 'Actor normalised reward (Tinker)',
    meaning: "Mean of the actor's rewards after normalisation (raw reward − the game's EMA baseline, spade/core/utils/trajectory_build.py:75): an advantage, not the actor's return (spade/tinker/rollout.py:228).",
  },
  { key: 'rollout/env_mean_return', title: 'Designer reward (Tinker)', meaning: "Mean reward of the designer's game-writing samples in the batch (spade/tinker/rollout.py:229)." },
  {
    key: 'fixed_eval/overall_pass_rate',
    title: 'Fixed-model pass rate (Tinker)',
    meaning: 'Share of plays a fixed outside model (FIXED_EVAL_MODEL) wins on the current games; about 0.5 is the difficulty SPADE aims for (spade/core/eval/fixed_model_eval.py:8, 74).',
  },
  { key: 'fixed_eval/difficulty_score', title: 'Fixed-model difficulty score (Tinker)', meaning: '1 − |pass rate − 0.5| ÷ 0.5: 1 when the fixed model wins half its plays (fixed_model_eval.py:45).' },
  // The local GRPO recipe (core/train, resources/train/spade_grpo.py) prints what TRL 1.16's GRPOTrainer
  // logs per step (trl/trainer/grpo_trainer.py, GRPOTrainer.log at line 3302 averages `_metrics`).
  { key: 'reward', title: 'GRPO: reward', meaning: "Mean reward of the step's episodes: serve-env's episode return (SPADE's), plus the --boxed-reward option when set (grpo_trainer.py:2828)." },
  { key: 'reward_std', title: 'GRPO: reward std', meaning: "Standard deviation of the step's rewards (grpo_trainer.py:2829)." },
  { key: 'frac_reward_zero_std', title: 'GRPO: groups with zero reward std', meaning: 'Share of groups whose rewards are all equal: they give no advantage, so no gradient (grpo_trainer.py:2830).' },
  { key: 'kl', title: 'GRPO: KL', meaning: 'Mean per-token KL of the policy to the base model (adapter off), logged when beta > 0 (grpo_trainer.py:3268).' },
  { key: 'loss', title: 'GRPO: loss', meaning: "The trainer's loss for the step (transformers' Trainer log)." },
  { key: 'completions/mean_length', title: 'GRPO: completion length', meaning: "Mean tokens the model wrote per episode, over all its turns (observations between turns not counted; grpo_trainer.py:2296)." },
];

/**
 * `eval/<dataset>`: the mean reward on one evaluation set (slime/ray/rollout.py:1191); its sub-keys are
 * not defaults. `<aime2024|aime2025>/pass@K`: a Tinker run's AIME evaluation (spade/tinker/evaluators.py:184).
 */
const EVAL_CURVE = /^eval\/[^/]+$|^aime\d{4}\/pass@\d+$/;

/** Per-skill series whose SPADE name misleads, and what they are. */
const PATTERN_MEANINGS: [RegExp, (m: RegExpExecArray) => string][] = [
  [/^env\/skill_(.+)\/actor_win_rate$/, (m) => `Mean reward of the actor's plays of ${m[1]} games: a mean reward, not a share of wins (spade/core/utils/env_rewards.py:148, 256).`],
  [/^env\/avg_actor_win_rate$/, () => "Mean reward of the actor's plays: a mean reward, not a share of wins (spade/core/utils/env_rewards.py:171, 287)."],
  [/^env\/skill_(.+)\/mean_regret$/, (m) => `Mean regret of the ${m[1]} games, negatives floored at 0 (env_rewards.py:274).`],
  [/^rollout\/mean_return$/, () => "Mean reward of every trained sample, actor (normalised) and designer together (spade/slime/spade_rollout.py:748; Tinker: spade/tinker/rollout.py:227): not the actor's return."],
  [/^(aime\d{4})\/pass@(\d+)$/, (m) => `Share of ${m[1]} problems solved by at least one of ${m[2]} samples (spade/tinker/evaluators.py:180, 184).`],
  [/^actor\/skill_(.+)\/avg_reward$/, (m) => `Mean reward of the actor's ${m[1]} plays (spade/core/orchestrator.py:2444).`],
  [/^eval\/([^/]+)$/, (m) => `Mean reward on the evaluation set ${m[1]} (slime/ray/rollout.py:1191).`],
];

export function chartInfo(key: string): ChartInfo {
  const known = DEFAULT_CHARTS.find((c) => c.key === key);
  if (known) return known;
  for (const [re, say] of PATTERN_MEANINGS) {
    const m = re.exec(key);
    if (m) return { key, title: key, meaning: say(m) };
  }
  return { key, title: key, meaning: '' };
}

/** The keys a job view opens with, from the keys the run has: the defaults present, then the eval curves. */
export function defaultChartKeys(keys: string[]): string[] {
  const have = new Set(keys);
  const out = DEFAULT_CHARTS.filter((c) => have.has(c.key) && !(c.unlessKey && have.has(c.unlessKey))).map((c) => c.key);
  for (const k of [...keys].sort()) if (EVAL_CURVE.test(k) && !k.endsWith('-truncated_ratio')) out.push(k);
  return out;
}
