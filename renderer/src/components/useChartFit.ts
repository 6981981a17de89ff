import { useEffect, type RefObject } from 'react';
import type uPlot from 'uplot';

/** Narrower than this a chart's axes eat the plot; its container scrolls instead. */
export const CHART_MIN_WIDTH = 160;

/** The width a chart should have in its container now. */
export function chartWidth(el: HTMLElement | null, fallback = 360): number {
  return Math.max(CHART_MIN_WIDTH, Math.floor(el?.clientWidth || fallback));
}

/**
 * Keeps a uPlot chart as wide as its container: the side panel dragged, the window resized or a
 * pane opened all change the width, and a chart built once at its first width would be cut.
 */
export function useChartFit(el: RefObject<HTMLElement | null>, plot: RefObject<uPlot | null>, height: number): void {
  useEffect(() => {
    const node = el.current;
    if (!node || typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(() => {
      const p = plot.current;
      if (!p) return;
      const w = chartWidth(node);
      if (Math.abs(p.width - w) >= 1) p.setSize({ width: w, height });
    });
    ro.observe(node);
    return () => ro.disconnect();
  }, [el, plot, height]);
}
