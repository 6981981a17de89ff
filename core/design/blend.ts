/**
 * SPADE's designer reward for a played game of a design round (core/api/blendParts.ts and
 * core/api/spadeBlend.ts have the formula and its file:line in SPADE), in the shape `design --json`,
 * `design.get` and the Design page show beside each game.
 *
 * Inputs: SPADE's blend reads the plateau at `win_rate`, the MEAN raw reward of the unhinted plays
 * (spade/core/utils/delayed_env_rewards.py:493-494), not the share of wins; for one round of plays that is
 * the game's r_no_hint (the workbench's `win_rate` field is the share of returns above 0, a different
 * number once rewards are partial). Regret is the regret the round measured, by whichever estimator the
 * round used (named in `estimator` where the stored play says which). A game that was not accepted or
 * not played has no blend (null), not a 0.
 */
import { blendParts, type BlendParts } from '../api/blendParts';

export type DesignBlend = BlendParts;

export function designBlend(g: { accepted: boolean; r_no_hint: number | null; regret: number | null; regret_estimator?: string | null }): DesignBlend | null {
  if (!g.accepted) return null;
  return blendParts(g.r_no_hint, g.regret, g.regret_estimator ?? null);
}
