import { useEffect, useMemo, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { chartWidth, useChartFit } from '../../components/useChartFit';
import type { JobMetrics, JobSummary } from '../../../../core/api/calls/jobs';
import { chartInfo, defaultChartKeys } from '../../../../core/api/spadeCharts';
import { backend } from '../../store/app';
import { useJobs } from './store';
import { STEP_INCREMENTS, fitRange, stepTickLabels } from './logFormat';

type Series = { key: string; axis?: string; steps: number[]; values: number[] };
type Games = JobMetrics['games'];
const COLORS = ['#2f7ed8', '#e4572e'];

/** Aligns two runs on the union of their steps (uPlot wants one x array; gaps are nulls). */
export function align(a: Series | undefined, b: Series | undefined): [number[], (number | null)[], (number | null)[]] {
  const xs = [...new Set([...(a?.steps ?? []), ...(b?.steps ?? [])])].sort((x, y) => x - y);
  const map = (s: Series | undefined): (number | null)[] => {
    if (!s) return xs.map(() => null);
    const m = new Map<number, number>();
    s.steps.forEach((st, i) => m.set(st, s.values[i]!));
    return xs.map((x) => m.get(x) ?? null);
  };
  return [xs, map(a), map(b)];
}

function Chart({ metric, a, b, nameA, nameB }: { metric: string; a: Series | undefined; b: Series | undefined; nameA: string; nameB: string | null }) {
  const info = chartInfo(metric);
  // A short title; the key itself heads the caption under the chart, with what the number is.
  const title = info.title;
  // Each series has its own x axis: Slime's rollout/step, train/step or eval/step, Tinker's step.
  const axis = a?.axis ?? b?.axis ?? 'rollout/step';
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const [drawMs, setDrawMs] = useState(0);
  const data = useMemo(() => align(a, b), [a, b]);
  useEffect(() => {
    const width = chartWidth(el.current);
    const series: uPlot.Series[] = [{ label: axis }, { label: nameA, stroke: COLORS[0], width: 1.5, points: { show: data[0].length < 200 } }];
    // Dashed, so a run that matches the other step for step stays visible on top of it.
    if (nameB) series.push({ label: nameB, stroke: COLORS[1], width: 1.5, dash: [6, 4], points: { show: data[0].length < 200 } });
    plot.current?.destroy();
    // uPlot draws in a microtask after construction: the draw hook marks when pixels are done.
    const t0 = performance.now();
    let first = true;
    plot.current = new uPlot(
      {
        width,
        height: 180,
        series,
        // The y range fits the data (uPlot's default drew a flat reward of 0 on 0..100).
        scales: { x: { time: false }, y: { range: (_u, lo, hi) => fitRange(lo, hi) } },
        // Steps are whole numbers: no 1.5 ticks.
        axes: [{ incrs: STEP_INCREMENTS, values: (_u, vals) => stepTickLabels(vals), label: axis, labelSize: 14, labelFont: '11px sans-serif' }, {}],
        legend: { show: true },
        cursor: { drag: { x: true, y: false } },
        hooks: {
          draw: [
            () => {
              if (!first) return;
              first = false;
              setDrawMs(performance.now() - t0);
            },
          ],
        },
      },
      (nameB ? data : [data[0], data[1]]) as uPlot.AlignedData,
      el.current!,
    );
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
  }, [data, title, axis, nameA, nameB]);
  useChartFit(el, plot, 180);
  return (
    <figure className="jobs-chart-box">
      {/* What the chart is comes first, so it is read before the curve: title, SPADE's key, what the number is. */}
      <figcaption className="jobs-chart-head">
        <span className="jobs-chart-title">{title}</span>
        {title !== metric ? <span className="jobs-chart-key mono muted">{metric}</span> : null}
        {info.meaning ? (
          <span className="jobs-chart-meaning muted" data-testid="jobs-chart-meaning" title={info.meaning}>
            {info.meaning}
          </span>
        ) : null}
      </figcaption>
      <div className="jobs-chart" ref={el} data-testid="jobs-chart" data-key={metric} data-axis={axis} data-points={data[0].length} data-draw-ms={drawMs.toFixed(2)} />
    </figure>
  );
}

/** SPADE's per-game returns from the log's [REGRET] lines (the only place both returns are written). */
function GameTable({ games }: { games: Games }) {
  if (!games.length) return null;
  const f = (v: number | null) => (v === null ? 'not measured' : v.toFixed(3));
  return (
    <details className="jobs-games" data-testid="jobs-games">
      <summary>
        Games with SPADE&apos;s regret ({games.length}): R(hint), R(no hint) and regret as its [REGRET] lines printed them
      </summary>
      <table>
        <thead>
          <tr>
            <th>game</th>
            <th>R(hint)</th>
            <th>R(no hint)</th>
            <th>regret</th>
          </tr>
        </thead>
        <tbody>
          {games.map((g) => (
            <tr key={g.game} data-testid="jobs-game-row">
              <td className="mono">{g.game}</td>
              <td>{f(g.rHint)}</td>
              <td>{f(g.rNoHint)}</td>
              <td>{f(g.regret)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}

/** Live charts of a job's metrics, each over its own x axis, optionally against a second run; then the games' returns. */
export function MetricsCharts({ job }: { job: JobSummary }) {
  const jobs = useJobs((s) => s.jobs);
  const [keys, setKeys] = useState<string[]>([]);
  const [chosen, setChosen] = useState<string[] | null>(null);
  const [mine, setMine] = useState<Series[]>([]);
  const [other, setOther] = useState<Series[]>([]);
  const [games, setGames] = useState<Games>([]);
  const [compareId, setCompareId] = useState('');
  const defaults = defaultChartKeys(keys);
  const shown = chosen ?? (defaults.length ? defaults : keys.slice(0, 4));

  useEffect(() => {
    let alive = true;
    const load = async () => {
      const r = await backend().call('jobs.metrics', { id: job.id });
      if (!alive) return;
      setKeys(r.keys);
      setMine(r.series);
      setGames(r.games);
      if (compareId) {
        const o = await backend().call('jobs.metrics', { id: compareId });
        if (alive) setOther(o.series);
      } else setOther([]);
    };
    void load();
    // Refresh while the log grows (metrics arrive with it), at most twice a second.
    let timer: ReturnType<typeof setTimeout> | null = null;
    const off = backend().on('jobs.logGrew', (p) => {
      if (p.id !== job.id || timer) return;
      timer = setTimeout(() => {
        timer = null;
        void load();
      }, 500);
    });
    return () => {
      alive = false;
      off();
      if (timer) clearTimeout(timer);
    };
  }, [job.id, compareId, job.state]);

  const otherName = jobs.find((j) => j.id === compareId)?.name ?? null;
  return (
    <div className="jobs-metrics" data-testid="jobs-metrics">
      <div className="jobs-metrics-bar">
        <select
          multiple
          size={1}
          aria-label="Metrics"
          className="jobs-keys"
          value={shown}
          onChange={(e) => setChosen([...e.target.selectedOptions].map((o) => o.value))}
        >
          {keys.map((k) => (
            <option key={k}>{k}</option>
          ))}
        </select>
        <label>
          Compare with{' '}
          <select value={compareId} onChange={(e) => setCompareId(e.target.value)} data-testid="jobs-compare">
            <option value="">(none)</option>
            {jobs
              .filter((j) => j.id !== job.id)
              .map((j) => (
                <option key={j.id} value={j.id}>
                  {j.name}
                </option>
              ))}
          </select>
        </label>
      </div>
      {compareId ? (
        // One legend for every chart, above them: uPlot's own sits under each chart, out of view when the pane scrolls.
        <div className="jobs-legend" data-testid="jobs-legend">
          {[job.name, otherName ?? compareId].map((name, i) => (
            <span key={i} className="jobs-legend-item" data-run={i ? 'compared' : 'this'}>
              <svg width="22" height="8" aria-hidden="true">
                <line x1="1" y1="4" x2="21" y2="4" stroke={COLORS[i]} strokeWidth="2" strokeDasharray={i ? '6 4' : undefined} />
              </svg>
              {name}
            </span>
          ))}
        </div>
      ) : null}
      {keys.length === 0 ? (
        <p className="muted">No metrics yet: Slime&apos;s perf/step/eval lines in the log, or JSON lines with a step key (metrics.jsonl), appear here.</p>
      ) : null}
      <div className="jobs-charts">
        {shown.map((k) => (
          <Chart key={k} metric={k} a={mine.find((s) => s.key === k)} b={compareId ? other.find((s) => s.key === k) : undefined} nameA={job.name} nameB={compareId ? otherName : null} />
        ))}
      </div>
      <GameTable games={games} />
    </div>
  );
}
