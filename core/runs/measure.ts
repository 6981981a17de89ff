/**
 * What a model run measured for one environment, from its episode rows. A failed episode (the
 * endpoint errored or timed out, the harness crashed, the game would not load) has no return: it
 * is counted as failed and left out of every mean, win rate and regret. The numbers are "not
 * measured" (null) unless enough seeds of each arm played: a dead server never reads as regret 0.
 *
 * Win rate: the share of the unhinted episodes whose return is above 0. SPADE's actor plays its
 * training episodes without the hint, and its memory's `actor_win_rate` is that actor's rate on a
 * game; a won game pays 1.0 and SPADE's own "too easy" test counts a run won at the first reward
 * above 0, so `> 0` is the line.
 */
import { spadeRegret } from '../episodes/spade';
import { spadeAggregate, type RegretEstimator } from '../episodes/estimator';

export interface RunEpisodeRow {
  envHash: string;
  hint: boolean;
  /** The reset's seed; for an unseeded play (`unseeded`), its place among the run's unseeded plays. */
  seed: number;
  unseeded?: boolean;
  status: 'ok' | 'failed';
  /** Null when failed. */
  ret: number | null;
  endedBy: string;
  error: string | null;
  episodeId: number | null;
}

export interface Measurement {
  rHint: number | null;
  rNoHint: number | null;
  regret: number | null;
  winRate: number | null;
  /** SPADE's fixed-model difficulty, 1 - |p - 0.5| / 0.5 (p the win rate); null with it. */
  difficulty: number | null;
  hintFailed: boolean;
  okHint: number;
  okNoHint: number;
  failed: number;
  /** The seeds the numbers came from (both arms succeeded on each, when both arms were played). */
  seeds: number[];
  /** Why a number is missing, e.g. "3 of 8 episodes failed; regret needs 4 of 4 seeds of each arm". */
  notMeasured: string | null;
}

export const FRONTIER = { lo: 0.15, hi: 0.85 } as const;

export function difficultyScore(p: number | null): number | null {
  return p === null ? null : 1 - Math.abs(p - 0.5) / 0.5;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * @param requested seeds asked for per arm; `minShare` the share of them each arm must have played
 *   successfully (the `runMinSuccess` setting, 1 = every seed of both arms).
 */
export function measure(rows: RunEpisodeRow[], o: { arms: ('hint' | 'nohint')[]; requested: number; minShare: number; hintFailed: boolean; estimator: RegretEstimator }): Measurement {
  if (o.estimator === 'spade') return measureSpade(rows, o);
  const ok = rows.filter((r) => r.status === 'ok' && r.ret !== null);
  const failed = rows.length - ok.length;
  const playsHint = o.arms.includes('hint') && !o.hintFailed;
  const playsNoHint = o.arms.includes('nohint');
  const hinted = new Map(ok.filter((r) => r.hint).map((r) => [r.seed, r.ret!]));
  const plain = new Map(ok.filter((r) => !r.hint).map((r) => [r.seed, r.ret!]));
  // Paired: a seed counts when every arm played succeeded on it, so both means cover the same seeds.
  const seeds = [...new Set(ok.map((r) => r.seed))].filter((s) => (!playsHint || hinted.has(s)) && (!playsNoHint || plain.has(s))).sort((a, b) => a - b);
  const need = Math.max(1, Math.ceil(o.requested * o.minShare - 1e-9));
  const enough = seeds.length >= need;
  const w = seeds.map((s) => hinted.get(s)!);
  const wo = seeds.map((s) => plain.get(s)!);
  const rNoHint = playsNoHint && enough ? mean(wo) : null;
  const rHint = playsHint && enough ? mean(w) : null;
  // Regret is measured only with both arms played: a game without a hint has none (SPADE's trainer
  // scores a failed hint generation 0, spadeRegret; a measurement never reads a missing arm as 0).
  const regret = enough && playsNoHint && playsHint ? spadeRegret({ hintReturns: w, noHintReturns: wo }).regret : null;
  const winRate = rNoHint !== null ? wo.filter((x) => x > 0).length / wo.length : null;
  const total = rows.length;
  let notMeasured: string | null = null;
  if (!enough) {
    const armsText = playsHint && playsNoHint ? 'of each arm' : 'played';
    notMeasured = `${failed} of ${total} episodes failed; ${seeds.length} of ${o.requested} seeds played in full, ${need} needed ${armsText}`;
    // SPADE's own refusal, in its words, ahead of the counts (core/episodes/regret.ts one()).
    const refusal = rows.find((r) => r.endedBy === 'refused' && r.error)?.error;
    if (refusal) notMeasured = `${refusal.replace(/ \(SPADE never plays it: .*\)$/, '')}; ${notMeasured}`;
  }
  return { rHint, rNoHint, regret, winRate, difficulty: difficultyScore(winRate), hintFailed: o.hintFailed, okHint: hinted.size, okNoHint: plain.size, failed, seeds: enough ? seeds : [], notMeasured };
}

/**
 * SPADE's estimator (core/episodes/estimator.ts): every hinted play counts, a failed one as 0.0; a
 * failed unhinted play is dropped. Measured once any unhinted play finished (SPADE has no quorum);
 * regret needs the hinted arm to have played at all, and stays "not measured" without a hint
 * (SPADE's trainer writes 0.0 there; the workbench never shows a missing arm as 0).
 */
function measureSpade(rows: RunEpisodeRow[], o: { arms: ('hint' | 'nohint')[]; hintFailed: boolean }): Measurement {
  const failed = rows.filter((r) => r.status !== 'ok' || r.ret === null).length;
  const playsHint = o.arms.includes('hint') && !o.hintFailed;
  const a = spadeAggregate(rows.map((r) => ({ hint: r.hint, ret: r.ret ?? 0, failed: r.status !== 'ok' || r.ret === null })), o.hintFailed);
  const hinted = rows.filter((r) => r.hint);
  const plainOk = a.noHintReturns.length;
  const rNoHint = plainOk ? a.rNoHint : null;
  const rHint = playsHint && hinted.length ? a.rHint : null;
  const regret = rHint !== null && rNoHint !== null ? a.regret : null;
  const winRate = rNoHint !== null ? a.noHintReturns.filter((x) => x > 0).length / plainOk : null;
  let notMeasured: string | null = null;
  if (rNoHint === null) notMeasured = rows.some((r) => !r.hint) ? `every unhinted play failed (${failed} of ${rows.length} episodes failed)` : 'no unhinted play yet';
  else if (playsHint && rHint === null) notMeasured = 'no hinted play yet';
  const seeds = [...new Set(hinted.map((r) => r.seed))].sort((x, y) => x - y);
  return { rHint, rNoHint, regret, winRate, difficulty: difficultyScore(winRate), hintFailed: o.hintFailed, okHint: hinted.length - a.zeroedHint, okNoHint: plainOk, failed, seeds, notMeasured };
}
