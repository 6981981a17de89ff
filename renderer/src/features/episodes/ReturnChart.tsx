import { memo, useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { chartWidth, useChartFit } from '../../components/useChartFit';

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  color: string;
}

/** Lines over a shared x axis (steps or seeds), with a marker at the selected x. */
export const LineChart = memo(function LineChart({ xs, series, marker, height = 140, testId, xLabel = 'step' }: { xs: number[]; series: ChartSeries[]; marker?: number | null; height?: number; testId: string; xLabel?: string }) {
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const markerRef = useRef<number | null | undefined>(marker);
  markerRef.current = marker;
  const labels = series.map((s) => `${s.label}:${s.color}`).join('|');
  const data = [xs, ...series.map((s) => s.values)] as uPlot.AlignedData;
  const dataRef = useRef(data);
  dataRef.current = data;
  useEffect(() => {
    const width = chartWidth(el.current, 400);
    plot.current?.destroy();
    plot.current = new uPlot(
      {
        width,
        height,
        // Returns live in [-1, 1] for SPADE games: keep 0 and 1 in view so a flat line is not blown up.
        scales: { x: { time: false }, y: { range: (_u, lo, hi) => [Math.min(0, lo ?? 0), Math.max(1, hi ?? 1)] } },
        axes: [{ incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000] }, {}],
        legend: { show: series.length > 1 },
        series: [{ label: xLabel }, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 1.5, points: { show: xs.length < 120 || series.length > 1 } }))],
        hooks: {
          draw: [
            (u: uPlot) => {
              const m = markerRef.current;
              if (m === null || m === undefined) return;
              const x = u.valToPos(m, 'x', true);
              const ctx = u.ctx;
              ctx.save();
              ctx.strokeStyle = '#e4572e';
              ctx.lineWidth = 1.5;
              ctx.beginPath();
              ctx.moveTo(x, u.bbox.top);
              ctx.lineTo(x, u.bbox.top + u.bbox.height);
              ctx.stroke();
              ctx.restore();
            },
          ],
        },
      },
      dataRef.current,
      el.current!,
    );
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
    // Rebuilt only when the series themselves change; new points go through setData (cheap).
  }, [labels, height, xLabel]);
  useChartFit(el, plot, height);
  useEffect(() => {
    // uPlot draws at a fixed width: follow the column when the window (or a split) resizes.
    const box = el.current!;
    const ro = new ResizeObserver(() => {
      const w = Math.max(240, box.clientWidth);
      if (plot.current && Math.abs(plot.current.width - w) > 1) plot.current.setSize({ width: w, height });
    });
    ro.observe(box);
    return () => ro.disconnect();
  }, [height]);
  useEffect(() => {
    plot.current?.setData(dataRef.current);
  }, [xs, series]);
  useEffect(() => {
    plot.current?.redraw(false, false);
  }, [marker]);
  return <div className="ep-chart" ref={el} data-testid={testId} data-points={xs.length} />;
});
