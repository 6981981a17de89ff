/**
 * SPADE's designer reward for a played game of a design round (core/api/spadeBlend.ts has the formula
 * and its file:line in SPADE), in the shape `design --json` prints beside each game.
 *
 * Inputs: SPADE's blend reads the plateau at `win_rate`, the MEAN raw reward of the unhinted plays
 * (spade/core/utils/delayed_env_rewards.py:493-494), not the share of wins; for one round of plays that is
 * the game's r_no_hint (the workbench's `win_rate` field is the share of returns above 0, a different
 * number once rewards are partial). Regret is the regret the round measured, by whichever estimator the
 * round used. A game that was not accepted or not played has no blend (null), not a 0.
 */
import { spadeBlendScore, type SpadeBlendParams } from '../api/spadeBlend';

export interface DesignBlend {
  /** SPADE's blend_raw before per-skill centering. */
  blend: number;
  plateau: number;
  regret_norm: number;
  plateau_term: number;
  regret_term: number;
  /** The mean unhinted reward the plateau was read at. */
  mean_reward: number;
  regret: number;
  /** blend < 0: SPADE would leave the game out of the designer's update. */
  masked: boolean;
  params: SpadeBlendParams;
}

export function designBlend(g: { accepted: boolean; r_no_hint: number | null; regret: number | null }): DesignBlend | null {
  if (!g.accepted || g.r_no_hint === null || g.regret === null) return null;
  const s = spadeBlendScore({ meanReward: g.r_no_hint, regret: g.regret });
  return {
    blend: s.blend,
    plateau: s.plateau,
    regret_norm: s.regretNorm,
    plateau_term: s.plateauTerm,
    regret_term: s.regretTerm,
    mean_reward: s.winRate,
    regret: g.regret,
    masked: s.masked,
    params: s.params,
  };
}
