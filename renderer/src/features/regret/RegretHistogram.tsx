import { useEffect, useMemo, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { chartWidth, useChartFit } from '../../components/useChartFit';
import { regretBins } from './bins';

const HEIGHT = 170;

/**
 * How the pool's regret is spread: environments per bin of regret (quarters), as bars. SPADE's
 * designer is rewarded for the right tail; a pool piled at 0 teaches the agent nothing new.
 */
export function RegretHistogram({ regrets, testId }: { regrets: number[]; testId: string }) {
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const bins = useMemo(() => regretBins(regrets), [regrets]);
  useEffect(() => {
    plot.current?.destroy();
    plot.current = new uPlot(
      {
        width: chartWidth(el.current, 420),
        height: HEIGHT,
        scales: { x: { time: false, range: [bins.lo - bins.width / 2, bins.hi + bins.width / 2] }, y: { range: (_u, _lo, hi) => [0, Math.max(1, hi ?? 1)] } },
        axes: [
          { label: 'regret (R(hint) − R(no hint))', incrs: [0.25, 0.5, 1], values: (_u, vals) => vals.map((v) => (Math.abs(v) < 1e-9 ? '0' : String(v))) },
          { size: 40, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000, 10000] },
        ],
        legend: { show: false },
        cursor: { show: false },
        series: [{}, { label: 'environments', fill: 'rgba(47,126,216,0.55)', stroke: '#2f7ed8', width: 1, paths: uPlot.paths.bars!({ size: [0.9, 60] }), points: { show: false } }],
      },
      [bins.centers, bins.counts],
      el.current!,
    );
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
  }, [bins]);
  useChartFit(el, plot, HEIGHT);
  return <div className="regret-chart" ref={el} data-testid={testId} data-bins={bins.counts.join(',')} role="img" aria-label={`Regret over ${regrets.length} environments, in bins of ${bins.width}`} />;
}
