/**
 * The designer's reward of one game as the contract carries it (Design page, library, exports,
 * `design --json`): SPADE's blend (core/api/spadeBlend.ts has the formula and SPADE's file:line)
 * and every part of it, computed from two stored numbers, the mean unhinted reward and the regret.
 *
 * The plateau is read at the MEAN unhinted reward, as SPADE's `win_rate` is
 * (spade/core/utils/delayed_env_rewards.py:493-494), never at the workbench's share of wins.
 * A game whose regret or mean reward was not measured has no blend (null): SPADE would score such a
 * game with 0.0 stand-ins (`_mean_or_zero`, env_rewards.py:19-20), which reads like a measurement.
 */
import { z } from 'zod';
import { SPADE_BLEND_DEFAULTS, spadeBlendScore, type SpadeBlendParams } from './spadeBlend';

export const blendParamsSchema = z.object({
  plateauWeight: z.number(),
  regretWeight: z.number(),
  regretScale: z.number(),
  regretFloor: z.boolean(),
  plateauLo: z.number(),
  plateauHi: z.number(),
  plateauRamp: z.number(),
});

export const blendPartsSchema = z.object({
  /** SPADE's blend_raw (before per-skill centering). */
  blend: z.number(),
  /** plateau_reward(mean_reward), in [0, 1]. */
  plateau: z.number(),
  /** regret / regretScale, clamped to [0, 1] under the recipes' regret floor. */
  regret_norm: z.number(),
  /** plateauWeight x plateau and regretWeight x regret_norm: they add up to blend. */
  plateau_term: z.number(),
  regret_term: z.number(),
  /** The mean unhinted reward the plateau was read at (SPADE's win_rate). */
  mean_reward: z.number(),
  regret: z.number(),
  /** blend < 0: SPADE leaves the game out of the designer's update (delayed_env_rewards.py:526-529). */
  masked: z.boolean(),
  params: blendParamsSchema,
  /** Which estimator measured the regret, where the stored regret says so; null when it does not. */
  estimator: z.string().nullable(),
});
export type BlendParts = z.infer<typeof blendPartsSchema>;

const known = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * The blend of a game from its stored numbers, or null when either was not measured (null, absent,
 * or not a finite number: SQLite and JSON hold no NaN, so such a value is a missing one).
 */
export function blendParts(meanReward: unknown, regret: unknown, estimator: unknown = null, params: SpadeBlendParams = SPADE_BLEND_DEFAULTS): BlendParts | null {
  if (!known(meanReward) || !known(regret)) return null;
  const s = spadeBlendScore({ meanReward, regret }, params);
  return {
    blend: s.blend,
    plateau: s.plateau,
    regret_norm: s.regretNorm,
    plateau_term: s.plateauTerm,
    regret_term: s.regretTerm,
    mean_reward: s.winRate,
    regret,
    masked: s.masked,
    params: s.params,
    estimator: typeof estimator === 'string' && estimator ? estimator : null,
  };
}
