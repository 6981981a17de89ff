/**
 * SPADE's designer reward per game: the "blend" variant that its paper recipes train the proposer on.
 * Pure (no Node), so the engine, the CLI and the renderer compute it the same way.
 *
 * Everything here is read from github:spade-rl/spade at 9b2b813 (paths below are in that tree):
 * - spade/core/utils/delayed_env_rewards.py:368-572 `recompute_delayed_env_rewards_blend` computes,
 *   per game (lines 455-530):
 *     regret      = r_hint - r_no_hint_0                          (:462-464)
 *     win_rate    = mean of every unhinted play in the window     (:493-494)
 *     plateau     = plateau_reward(win_rate, lo, hi, ramp)        (:499)
 *     regret_norm = regret / regret_scale, clamped to [0, 1] when regret_floor (:502-504)
 *     blend       = regret_weight*regret_norm + micro_lp_weight*(micro_lp/micro_lp_scale)
 *                   + plateau_weight*plateau - frontier_weight*(frontier_penalty/frontier_scale) (:506-511)
 * - spade/core/utils/rewards.py:16-26 `plateau_reward`: 1.0 inside [lo, hi], falling linearly to 0 over
 *   `ramp` outside it, never below 0.
 * - The recipes' settings: cmd/games/train_spade_{4b,8b,30b}.sh (4b:104-109, 8b:122-127, 30b:141-146) and
 *   cmd/tool_use/_train_spade_blend.sh:187-190 pass `--spade-env-reward-variant blend`, plateau weight 0.6,
 *   regret weight 0.4, `--spade-regret-floor`, regret scale 0.15, micro-LP weight 0.0; the frontier weight
 *   and the plateau band keep the function's defaults (0.0; lo 0.4, hi 0.6, ramp 0.25,
 *   delayed_env_rewards.py:378-384). Those recipe values are SPADE_BLEND_DEFAULTS below. (The function's
 *   own defaults differ, 0.5/0.5 and no floor, :371-384; no paper recipe runs with them.)
 *
 * "Negatives masked" (:526-529): a game whose blend is < 0 is marked `proposer_masked` and left out of the
 * per-skill centering, so it gives the designer no gradient at all (not a negative one). With the recipes'
 * settings (regret floored into [0, 1], frontier weight 0, plateau >= 0) the blend is never negative, so
 * nothing is masked (the docstring says so, :436-437); `masked` only turns true under other settings.
 *
 * Regret not measured: SPADE has no "unmeasured" state. A game with no cached hint reward reads
 * r_hint = 0.0 (:462) and a game with no unhinted play reads r_no_hint_0 = 0.0 and win_rate = 0.0
 * (`_mean_or_zero`, spade/core/utils/env_rewards.py:19-20). Here `regret: null` reports the regret term as
 * 0 with `regretMeasured: false`; SPADE would score -r_no_hint_0, which the floor also makes 0 unless
 * the unhinted mean is negative. `meanReward: null` is scored as SPADE scores it, with win rate 0.0.
 *
 * Not computed here: micro-LP (weight 0 in every blend recipe; it needs the step-keyed play history) and
 * the per-skill centering and scaling (`_apply_centered_rewards`, :45-62), which depend on the batch,
 * not on the game. So `blend` is SPADE's `blend_raw` (:518), before centering.
 */

export interface SpadeBlendParams {
  plateauWeight: number;
  regretWeight: number;
  regretScale: number;
  /** `--spade-regret-floor`: clamp regret/regretScale into [0, 1] (delayed_env_rewards.py:503-504). */
  regretFloor: boolean;
  plateauLo: number;
  plateauHi: number;
  plateauRamp: number;
}

/** The paper recipes' blend settings (see the header for file:line). */
export const SPADE_BLEND_DEFAULTS: Readonly<SpadeBlendParams> = Object.freeze({
  plateauWeight: 0.6,
  regretWeight: 0.4,
  regretScale: 0.15,
  regretFloor: true,
  plateauLo: 0.4,
  plateauHi: 0.6,
  plateauRamp: 0.25,
});

export interface SpadeBlendInput {
  /** Mean unhinted reward over the game's plays (SPADE's `win_rate`); null when no play was scored. */
  meanReward: number | null;
  /** r_hint - r_no_hint (SPADE's matched-timing regret); null when not measured. */
  regret: number | null;
}

export interface SpadeBlendScore {
  /** SPADE's `blend_raw`: plateauWeight * plateau + regretWeight * regretNorm. */
  blend: number;
  /** plateau_reward(win rate), in [0, 1]. */
  plateau: number;
  /** regret / regretScale, clamped to [0, 1] when regretFloor; 0 when regret was not measured. */
  regretNorm: number;
  /** The two weighted terms, as they add up to `blend`. */
  plateauTerm: number;
  regretTerm: number;
  /** The win rate the plateau was read at (0 when meanReward was null, as SPADE's `_mean_or_zero`). */
  winRate: number;
  regretMeasured: boolean;
  /** blend < 0: SPADE leaves the game out of the designer's update (delayed_env_rewards.py:526-529). */
  masked: boolean;
  params: SpadeBlendParams;
}

/** rewards.py:16-26, same comparisons and arithmetic in the same order. */
export function spadePlateau(winRate: number, lo: number, hi: number, ramp: number): number {
  if (winRate < lo) return Math.max(0.0, 1.0 - (lo - winRate) / ramp);
  if (winRate > hi) return Math.max(0.0, 1.0 - (winRate - hi) / ramp);
  return 1.0;
}

function finite(name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new RangeError(`SPADE blend: ${name} must be a finite number, got ${String(value)}`);
  }
  return value;
}

function checkParams(p: SpadeBlendParams): void {
  for (const key of ['plateauWeight', 'regretWeight', 'regretScale', 'plateauLo', 'plateauHi', 'plateauRamp'] as const) {
    finite(key, p[key]);
  }
  // SPADE divides by both (rewards.py:23,25; delayed_env_rewards.py:502); Python would raise, so do we.
  if (p.regretScale === 0) throw new RangeError('SPADE blend: regretScale must not be 0');
  if (p.plateauRamp === 0) throw new RangeError('SPADE blend: plateauRamp must not be 0');
  if (p.plateauLo > p.plateauHi) {
    throw new RangeError(`SPADE blend: plateau band is empty (lo ${p.plateauLo} > hi ${p.plateauHi})`);
  }
  if (typeof p.regretFloor !== 'boolean') throw new RangeError('SPADE blend: regretFloor must be true or false');
}

export function spadeBlendScore(
  input: SpadeBlendInput,
  overrides: Partial<SpadeBlendParams> = {},
): SpadeBlendScore {
  const params: SpadeBlendParams = { ...SPADE_BLEND_DEFAULTS, ...overrides };
  checkParams(params);
  const winRate = input.meanReward === null ? 0.0 : finite('meanReward', input.meanReward);
  const plateau = spadePlateau(winRate, params.plateauLo, params.plateauHi, params.plateauRamp);
  const regretMeasured = input.regret !== null;
  let regretNorm = 0.0;
  if (input.regret !== null) {
    regretNorm = finite('regret', input.regret) / params.regretScale;
    if (params.regretFloor) regretNorm = Math.min(1.0, Math.max(0.0, regretNorm));
  }
  const regretTerm = params.regretWeight * regretNorm;
  const plateauTerm = params.plateauWeight * plateau;
  // Same order as delayed_env_rewards.py:506-511; the micro-LP and frontier terms are 0 (weights 0).
  const blend = regretTerm + plateauTerm;
  return { blend, plateau, regretNorm, plateauTerm, regretTerm, winRate, regretMeasured, masked: blend < 0, params };
}
