export interface ChartPoint {
  key: string;
  label: string;
  x: number;
  y: number;
}

const W = 300;
const H = 220;
const PAD = { l: 38, r: 10, t: 10, b: 32 };

/**
 * Win rate (x, 0 to 1) against regret (y) for a round's played games, with SPADE's frontier band
 * (win rate 0.15 to 0.85, where memory keeps its positives) shaded: a point inside it is a game
 * this agent neither always wins nor never wins.
 */
export function FrontierChart({ points, games }: { points: ChartPoint[]; games: number }) {
  // A little room past 0 and 1 on both axes, so a game that always loses (win rate 0, regret 1) is not cut by the frame.
  const lo0 = Math.min(0, ...points.map((p) => p.y));
  const hi0 = Math.max(1, ...points.map((p) => p.y));
  const lo = lo0 - (hi0 - lo0) * 0.05;
  const hi = hi0 + (hi0 - lo0) * 0.05;
  const x = (v: number) => PAD.l + ((v + 0.04) / 1.08) * (W - PAD.l - PAD.r);
  const y = (v: number) => H - PAD.b - ((v - lo) / (hi - lo)) * (H - PAD.t - PAD.b);
  return (
    <figure className="design-chart">
      <svg width={W} height={H} viewBox={`0 0 ${W} ${H}`} data-testid="design-chart" data-points={points.length} role="img" aria-label="Regret against win rate, one point per played game; the frontier band is shaded">
        <rect x={x(0.15)} y={PAD.t} width={x(0.85) - x(0.15)} height={H - PAD.t - PAD.b} className="design-band" data-testid="design-band" />
        <rect x={PAD.l} y={PAD.t} width={W - PAD.l - PAD.r} height={H - PAD.t - PAD.b} fill="none" stroke="var(--border)" />
        {lo0 < 0 ? <line x1={PAD.l} x2={W - PAD.r} y1={y(0)} y2={y(0)} stroke="var(--border)" /> : null}
        {[0, 0.15, 0.5, 0.85, 1].map((t) => (
          <text key={t} x={x(t)} y={H - PAD.b + 12} textAnchor="middle">
            {t}
          </text>
        ))}
        {[lo0, (lo0 + hi0) / 2, hi0].map((t) => (
          <text key={t} x={PAD.l - 4} y={y(t) + 3} textAnchor="end">
            {t.toFixed(1)}
          </text>
        ))}
        <text x={(PAD.l + W - PAD.r) / 2} y={H - 4} textAnchor="middle">
          win rate without the hint
        </text>
        <text x={10} y={(PAD.t + H - PAD.b) / 2} textAnchor="middle" transform={`rotate(-90 10 ${(PAD.t + H - PAD.b) / 2})`}>
          regret
        </text>
        <text x={(x(0.15) + x(0.85)) / 2} y={PAD.t + 12} textAnchor="middle" className="design-band-label">
          frontier
        </text>
        {points.map((p) => (
          <circle key={p.key} cx={x(p.x)} cy={y(p.y)} r={5} className="design-point" data-testid="design-point">
            <title>{`${p.label}: win rate ${p.x.toFixed(2)}, regret ${p.y.toFixed(3)}`}</title>
          </circle>
        ))}
      </svg>
      <figcaption className="muted">{points.length ? `${points.length} of ${games} game${games === 1 ? '' : 's'} played` : 'No game played yet: points appear as games are played.'}</figcaption>
    </figure>
  );
}
