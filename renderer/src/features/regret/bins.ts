/**
 * Bins of regret a quarter wide, centred on multiples of 0.25 from −1 to 1 at least (SPADE's
 * returns lie in [−1, 1], so regret in [−2, 2]); wider when a value lies outside.
 */
export function regretBins(values: readonly number[], width = 0.25): { lo: number; hi: number; width: number; centers: number[]; counts: number[] } {
  const at = (v: number) => Math.round(v / width);
  const finite = values.filter((v) => Number.isFinite(v));
  const lo = Math.min(at(-1), ...finite.map(at));
  const hi = Math.max(at(1), ...finite.map(at));
  const counts = Array.from({ length: hi - lo + 1 }, () => 0);
  for (const v of finite) counts[at(v) - lo]!++;
  return { lo: lo * width, hi: hi * width, width, centers: counts.map((_, i) => (lo + i) * width), counts };
}
