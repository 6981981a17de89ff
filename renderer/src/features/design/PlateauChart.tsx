import { useEffect, useMemo, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { chartWidth, useChartFit } from '../../components/useChartFit';
import { SPADE_BLEND_DEFAULTS } from '../../../../core/api/spadeBlend';

export interface PlateauPoint {
  /** The game's number in the round's table (drawn beside its point). */
  n: number;
  label: string;
  /** Mean unhinted reward: SPADE's `win_rate`, where its plateau is read. */
  x: number;
  regret: number;
  blend: number;
  masked: boolean;
}

/** The memory seed filter: the win rates SPADE's designer samples its examples from (not its reward). */
export const MEMORY_BAND = { lo: 0.15, hi: 0.85 } as const;
const HEIGHT = 240;
const P = SPADE_BLEND_DEFAULTS;
const fix = (v: number) => String(Number(v.toFixed(4)));

/**
 * Mean unhinted reward (x) against regret (y) for a round's played games, with what SPADE's designer
 * is paid for drawn behind them: the plateau (1 inside PLATEAU_LO-HI, falling to 0 over PLATEAU_RAMP
 * on either side, the values core/api/spadeBlend.ts computes with) and the regret at which the regret
 * term is full (regretScale). The workbench's memory band 0.15-0.85 is outlined and named for what it
 * is, the memory seed filter. Points are darker the higher their blend; a masked game is drawn red.
 * The canvas is uPlot's, as every chart in the renderer; the figure's data-* attributes say where
 * the plateau and the points were drawn (CSS pixels on the canvas) for tests and tools.
 */
export function PlateauChart({ points, games }: { points: PlateauPoint[]; games: number }) {
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const sorted = useMemo(() => [...points].sort((a, b) => a.x - b.x || a.n - b.n), [points]);
  const key = sorted.map((p) => `${p.n}:${p.x}:${p.regret}:${p.blend}`).join('|');
  useEffect(() => {
    const xs = sorted.map((p) => p.x);
    const ys = sorted.map((p) => p.regret);
    // Room past 0 and 1, and the regret scale always in view, so no point sits on the frame.
    const x0 = Math.min(0, ...xs);
    const x1 = Math.max(1, ...xs);
    const y0 = Math.min(0, ...ys);
    const y1 = Math.max(P.regretScale * 1.5, ...ys);
    const px = (x1 - x0) * 0.04;
    const py = (y1 - y0) * 0.06;
    const css = (name: string, fallback: string) => (el.current ? getComputedStyle(el.current).getPropertyValue(name).trim() : '') || fallback;
    plot.current?.destroy();
    plot.current = new uPlot(
      {
        width: chartWidth(el.current, 300),
        height: HEIGHT,
        scales: { x: { time: false, range: [x0 - px, x1 + px] }, y: { range: [y0 - py, y1 + py] } },
        axes: [
          { label: 'mean unhinted reward', labelSize: 18, size: 32, incrs: [0.1, 0.2, 0.25, 0.5], values: (_u, vals) => vals.map((v) => fix(v)) },
          { label: 'regret', labelSize: 16, size: 38, values: (_u, vals) => vals.map((v) => fix(v)) },
        ],
        legend: { show: false },
        cursor: { show: false },
        series: [{}, { label: 'games', stroke: 'transparent', paths: () => null, points: { show: false } }],
        hooks: {
          drawClear: [(u) => drawBands(u, css('--fg-muted', '#777'))],
          draw: [(u) => drawPoints(u, sorted, css('--bg', '#fff'))],
        },
      },
      [xs, ys],
      el.current!,
    );
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
    // Rebuilt when the points change (a round's games land one by one: a handful of rebuilds).
  }, [key]);
  useChartFit(el, plot, HEIGHT);
  const masked = points.filter((p) => p.masked).length;
  return (
    <figure className="design-chart" data-testid="design-chart-figure">
      <div
        className="design-plateau-chart"
        ref={el}
        data-testid="design-chart"
        data-points={points.length}
        data-plateau={`${P.plateauLo},${P.plateauHi},${P.plateauRamp}`}
        data-memory-band={`${MEMORY_BAND.lo},${MEMORY_BAND.hi}`}
        role="img"
        aria-label={`Regret against mean unhinted reward, one point per played game (${points.length}); SPADE's plateau ${P.plateauLo}–${P.plateauHi} with ramp ${P.plateauRamp} shaded, the memory seed filter ${MEMORY_BAND.lo}–${MEMORY_BAND.hi} outlined`}
        title={sorted.map((p) => `${p.label}: mean reward ${fix(p.x)}, regret ${p.regret.toFixed(3)}, blend ${p.blend.toFixed(3)}${p.masked ? ' (masked)' : ''}`).join('\n') || undefined}
      />
      <figcaption className="muted">
        <div className="design-chart-key" data-testid="design-chart-key">
          <span>
            <i className="design-key-plateau" /> SPADE plateau {P.plateauLo}–{P.plateauHi}, ramp {P.plateauRamp} (blend {P.plateauWeight} × plateau)
          </span>
          <span>
            <i className="design-key-scale" /> regret {P.regretScale}: regret term full ({P.regretWeight} × clip(regret / {P.regretScale}, 0, 1))
          </span>
          <span>
            <i className="design-key-memory" /> memory seed filter {MEMORY_BAND.lo}–{MEMORY_BAND.hi} (examples shown to the designer, not its reward)
          </span>
        </div>
        {points.length ? `x: mean unhinted reward (SPADE's win_rate). ${points.length} of ${games} game${games === 1 ? '' : 's'} measured; darker = higher blend${masked ? `; ${masked} masked (red)` : ''}` : 'No game measured yet: points appear as games are played.'}
      </figcaption>
    </figure>
  );
}

const GREEN = [46, 157, 79] as const;
const rgba = (c: readonly number[], a: number) => `rgba(${c[0]},${c[1]},${c[2]},${a})`;

/** The plateau (with its ramps), the regret scale and the memory seed filter, behind the grid. */
function drawBands(u: uPlot, muted: string): void {
  const { ctx, bbox } = u;
  const X = (v: number) => u.valToPos(v, 'x', true);
  const top = bbox.top;
  const bottom = bbox.top + bbox.height;
  const rampL = X(P.plateauLo - P.plateauRamp);
  const lo = X(P.plateauLo);
  const hi = X(P.plateauHi);
  const rampR = X(P.plateauHi + P.plateauRamp);
  ctx.save();
  ctx.beginPath();
  ctx.rect(bbox.left, top, bbox.width, bbox.height);
  ctx.clip();
  // The ramps fade linearly to 0, as plateau_reward does (rewards.py:16-26).
  const left = ctx.createLinearGradient(rampL, 0, lo, 0);
  left.addColorStop(0, rgba(GREEN, 0));
  left.addColorStop(1, rgba(GREEN, 0.28));
  ctx.fillStyle = left;
  ctx.fillRect(rampL, top, lo - rampL, bottom - top);
  ctx.fillStyle = rgba(GREEN, 0.28);
  ctx.fillRect(lo, top, hi - lo, bottom - top);
  const right = ctx.createLinearGradient(hi, 0, rampR, 0);
  right.addColorStop(0, rgba(GREEN, 0.28));
  right.addColorStop(1, rgba(GREEN, 0));
  ctx.fillStyle = right;
  ctx.fillRect(hi, top, rampR - hi, bottom - top);
  const dpr = uPlot.pxRatio;
  ctx.setLineDash([4 * dpr, 3 * dpr]);
  ctx.lineWidth = dpr;
  ctx.strokeStyle = muted;
  const m0 = X(MEMORY_BAND.lo);
  const m1 = X(MEMORY_BAND.hi);
  ctx.strokeRect(m0, top + dpr, m1 - m0, bottom - top - 2 * dpr);
  const ys = u.valToPos(P.regretScale, 'y', true);
  ctx.strokeStyle = rgba(GREEN, 0.9);
  ctx.beginPath();
  ctx.moveTo(bbox.left, ys);
  ctx.lineTo(bbox.left + bbox.width, ys);
  ctx.stroke();
  ctx.setLineDash([]);
  ctx.font = `${10 * dpr}px sans-serif`;
  ctx.textAlign = 'center';
  ctx.fillStyle = rgba(GREEN, 1);
  ctx.fillText('plateau', (lo + hi) / 2, top + 12 * dpr);
  ctx.fillStyle = muted;
  ctx.textAlign = 'left';
  ctx.fillText('memory seed filter', m0 + 3 * dpr, bottom - 5 * dpr);
  ctx.restore();
  const el = u.root.parentElement;
  if (el) el.dataset.plateauPx = [lo, hi, top, bottom].map((v) => (v / dpr).toFixed(1)).join(',');
}

/** Each game, labelled with its number in the table, darker the higher its blend (of 1). */
function drawPoints(u: uPlot, points: PlateauPoint[], bg: string): void {
  const { ctx } = u;
  const dpr = uPlot.pxRatio;
  const at: string[] = [];
  ctx.save();
  ctx.font = `${10 * dpr}px sans-serif`;
  ctx.textAlign = 'left';
  for (const p of points) {
    const x = u.valToPos(p.x, 'x', true);
    const y = u.valToPos(p.regret, 'y', true);
    const shade = Math.max(0, Math.min(1, p.blend));
    ctx.beginPath();
    ctx.arc(x, y, 5 * dpr, 0, 2 * Math.PI);
    ctx.fillStyle = p.masked ? '#c0392b' : `rgba(31,94,170,${(0.35 + 0.65 * shade).toFixed(3)})`;
    ctx.fill();
    ctx.lineWidth = dpr;
    ctx.strokeStyle = bg;
    ctx.stroke();
    ctx.fillStyle = p.masked ? '#c0392b' : '#1f5eaa';
    ctx.fillText(String(p.n), x + 6 * dpr, y - 5 * dpr);
    at.push(`${(x / dpr).toFixed(1)},${(y / dpr).toFixed(1)}`);
  }
  ctx.restore();
  const el = u.root.parentElement;
  if (el) el.dataset.pointsPx = at.join(';');
}
