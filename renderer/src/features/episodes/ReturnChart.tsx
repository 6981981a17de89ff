import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  color: string;
}

/** Lines over a shared x axis (steps or seeds), with a marker at the selected x. */
export function LineChart({ xs, series, marker, height = 140, testId, xLabel = 'step' }: { xs: number[]; series: ChartSeries[]; marker?: number | null; height?: number; testId: string; xLabel?: string }) {
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const markerRef = useRef<number | null | undefined>(marker);
  markerRef.current = marker;
  useEffect(() => {
    const width = Math.max(240, el.current!.clientWidth || 400);
    plot.current?.destroy();
    plot.current = new uPlot(
      {
        width,
        height,
        scales: { x: { time: false } },
        legend: { show: series.length > 1 },
        series: [{ label: xLabel }, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 1.5, points: { show: xs.length < 120 } }))],
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
      [xs, ...series.map((s) => s.values)] as uPlot.AlignedData,
      el.current!,
    );
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
  }, [xs, series, height, xLabel]);
  useEffect(() => {
    plot.current?.redraw(false, false);
  }, [marker]);
  return <div className="ep-chart" ref={el} data-testid={testId} data-points={xs.length} />;
}
