/** How long, and how much is left, in words a progress line shows (pure: unit-tested). */

export function seconds(sec: number): string {
  if (sec < 60) return `${Math.max(0, Math.floor(sec))} s`;
  const m = Math.floor(sec / 60);
  const s = Math.floor(sec % 60);
  return s ? `${m} min ${s} s` : `${m} min`;
}

/**
 * What is left, said honestly: an estimate given `etaAgeSec` ago counts down on its own, and
 * once it has run out while the work goes on, the line says so instead of freezing on "1 s left".
 */
export function remaining(etaSec: number | null, etaAgeSec: number, sinceLastResultSec: number): string {
  if (etaSec === null) return 'estimating…';
  const left = etaSec - etaAgeSec;
  if (left >= 1) return `about ${seconds(left)} left`;
  return `taking longer than estimated (last result ${seconds(sinceLastResultSec)} ago)`;
}
