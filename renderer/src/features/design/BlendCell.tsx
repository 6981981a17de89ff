import type { BlendParts } from '../../../../core/api/blendParts';
import { SPADE_BLEND_DEFAULTS } from '../../../../core/api/spadeBlend';

const P = SPADE_BLEND_DEFAULTS;
const f = (x: number, d = 2) => x.toFixed(d);

/** What the blend is, from the values the blend code computes with (never a copy of them). */
export const BLEND_FORMULA = `${P.plateauWeight} × plateau(mean R; ${P.plateauLo}–${P.plateauHi}, ramp ${P.plateauRamp}) + ${P.regretWeight} × clip(regret / ${P.regretScale}, 0, 1)`;

export function BlendHeader() {
  return (
    <th className="num" title={`SPADE's designer reward per game (blend_raw): ${BLEND_FORMULA}; a game below 0 is masked out of the designer's update. Below it: plateau term + regret term.`}>
      blend
    </th>
  );
}

/** Every part of the blend, in words, for the cell's tooltip. */
export function blendTitle(b: BlendParts): string {
  return [
    `blend ${f(b.blend, 3)} = plateau term ${f(b.plateau_term, 3)} + regret term ${f(b.regret_term, 3)}`,
    `plateau term = ${b.params.plateauWeight} × plateau(mean R ${f(b.mean_reward, 3)}) = ${b.params.plateauWeight} × ${f(b.plateau, 3)}`,
    `regret term = ${b.params.regretWeight} × ${b.params.regretFloor ? 'clip' : ''}(regret ${f(b.regret, 3)} / ${b.params.regretScale}${b.params.regretFloor ? ', 0, 1' : ''}) = ${b.params.regretWeight} × ${f(b.regret_norm, 3)}`,
    b.masked ? 'masked: below 0, SPADE gives the designer no gradient from this game' : 'not masked (masked only below 0)',
    b.estimator ? `regret measured by the ${b.estimator} estimator` : 'the stored regret does not name its estimator',
  ].join('\n');
}

/**
 * The blend and its two terms for one game; "not measured" where an accepted game has no regret or
 * mean reward (a play that failed or did not run), never a 0.
 */
export function BlendCell({ blend, played }: { blend: BlendParts | null; played: boolean }) {
  if (!blend) {
    return (
      <td className="num muted" data-testid="design-game-blend" data-measured="false" title={played ? 'Regret not measured: no blend (SPADE would score 0.0 stand-ins)' : undefined}>
        {played ? 'not measured' : '–'}
      </td>
    );
  }
  return (
    <td className="num design-blend" data-testid="design-game-blend" data-measured="true" data-blend={blend.blend} title={blendTitle(blend)}>
      <div>
        {f(blend.blend, 3)}
        {blend.masked ? (
          <span className="design-masked" data-testid="design-game-blend-masked">
            {' '}
            masked
          </span>
        ) : null}
      </div>
      <div className="design-blend-parts muted" data-testid="design-game-blend-parts">
        {f(blend.plateau_term)} + {f(blend.regret_term)}
        {blend.estimator ? <span data-testid="design-game-blend-estimator"> · {blend.estimator}</span> : null}
      </div>
    </td>
  );
}
