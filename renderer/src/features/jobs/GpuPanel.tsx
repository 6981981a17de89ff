import { useEffect, useMemo, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { JobSummary } from '../../../../core/api/calls/jobs';
import type { JobGpu } from '../../../../core/api/calls/jobsGpu';
import { chartWidth, useChartFit } from '../../components/useChartFit';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';
import './gpu.css';

type Node = JobGpu['nodes'][number];
type Gpu = Node['gpus'][number];
type Quantity = 'util' | 'memUsed' | 'power' | 'temp';

const ACTIVE = new Set(['submitting', 'pending', 'running', 'suspended']);
const GPU_COLORS = ['#2f7ed8', '#e4572e', '#2e9d4f', '#9b59b6', '#d9a400', '#17a2b8', '#c0392b', '#7f8c8d'];
const CHART_HEIGHT = 130;
const QUANTITIES: { key: Quantity; title: string; unit: string }[] = [
  { key: 'util', title: 'Utilization', unit: '%' },
  { key: 'memUsed', title: 'Memory used', unit: 'MiB' },
  { key: 'power', title: 'Power', unit: 'W' },
  { key: 'temp', title: 'Temperature', unit: '°C' },
];

/** The GPUs' series on the union of their sample times (uPlot wants one x array; gaps are nulls). */
function alignGpus(gpus: Gpu[], q: Quantity): uPlot.AlignedData {
  const xs = [...new Set(gpus.flatMap((g) => g.t))].sort((a, b) => a - b);
  const cols = gpus.map((g) => {
    const m = new Map<number, number | null>();
    g.t.forEach((t, i) => m.set(t, g[q][i] ?? null));
    return xs.map((x) => m.get(x) ?? null);
  });
  return [xs, ...cols] as uPlot.AlignedData;
}

function GpuChart({ node, gpus, q }: { node: string; gpus: Gpu[]; q: (typeof QUANTITIES)[number] }) {
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const data = useMemo(() => alignGpus(gpus, q.key), [gpus, q.key]);
  const anyValue = data.slice(1).some((col) => (col as (number | null)[]).some((v) => v !== null));
  useEffect(() => {
    if (!anyValue) return;
    const series: uPlot.Series[] = [{ label: 'time' }, ...gpus.map((g, i) => ({ label: `GPU ${g.index}`, stroke: GPU_COLORS[i % GPU_COLORS.length], width: 1.5, spanGaps: false }))];
    plot.current?.destroy();
    plot.current = new uPlot(
      {
        width: chartWidth(el.current, 260),
        height: CHART_HEIGHT,
        series,
        legend: { show: false },
        scales: { x: { time: true }, y: q.key === 'util' ? { range: [0, 100] } : { range: (_u, min, max) => [Math.min(0, min ?? 0), Math.max(1, (max ?? 1) * 1.1)] } },
        // One line of clock time per tick: uPlot's default adds a date row that runs into the axis label.
        axes: [
          { values: (_u, ticks) => ticks.map(clock), label: 'time', labelSize: 14, labelFont: '11px sans-serif', size: 30 },
          { label: q.unit, labelSize: 14, labelFont: '11px sans-serif', size: 52 },
        ],
      },
      data,
      el.current!,
    );
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
  }, [data, gpus, q, anyValue]);
  useChartFit(el, plot, CHART_HEIGHT);
  return (
    <figure className="gpu-chart-box">
      <figcaption className="jobs-chart-title">
        {q.title} <span className="muted">({q.unit})</span>
      </figcaption>
      {anyValue ? (
        <div className="gpu-chart" ref={el} data-testid="gpu-chart" data-node={node} data-quantity={q.key} data-points={data[0].length} />
      ) : (
        <p className="muted gpu-chart-none" data-testid="gpu-chart-none" data-quantity={q.key}>
          not given by these GPUs ([N/A] or [Not Supported])
        </p>
      )}
    </figure>
  );
}

const clock = (t: number): string => new Date(t * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
const fmt = (v: number | null | undefined, digits = 0): string => (v === null || v === undefined ? 'n/a' : v.toFixed(digits));
const last = (xs: (number | null)[]): number | null => xs[xs.length - 1] ?? null;

function NodeGpus({ node }: { node: Node }) {
  if (node.state === 'no-gpu') {
    return (
      <div className="gpu-none" data-testid="gpu-none" data-node={node.node}>
        <strong>No GPU seen</strong> on <span className="mono">{node.node}</span>: {node.detail}
      </div>
    );
  }
  const uuidIndex = new Map(node.gpus.map((g) => [g.uuid, g.index]));
  // The model is said once when every GPU is the same (the usual node); otherwise per row, under its index.
  const names = [...new Set(node.gpus.map((g) => g.name ?? 'unnamed GPU'))];
  return (
    <section className="gpu-node" data-testid="gpu-node" data-node={node.node}>
      <h4 className="gpu-node-head">
        <span className="mono">{node.node}</span>{' '}
        <span className="muted">
          · {node.gpus.length} × {names.length === 1 ? names[0] : 'GPU'}
        </span>
      </h4>
      <table className="gpu-table" data-testid="gpu-table">
        <thead>
          <tr>
            <th>GPU</th>
            <th>util %</th>
            <th>memory MiB</th>
            <th>power W</th>
            <th>temp °C</th>
          </tr>
        </thead>
        <tbody>
          {node.gpus.map((g, i) => (
            <tr key={g.index} data-testid="gpu-row" title={`${g.name ?? 'unnamed GPU'}${g.uuid ? ` · ${g.uuid}` : ''}`}>
              <td>
                <span className="gpu-swatch" style={{ background: GPU_COLORS[i % GPU_COLORS.length] }} aria-hidden="true" /> {g.index}
                {names.length > 1 ? <span className="muted gpu-name">{g.name ?? 'unnamed GPU'}</span> : null}
              </td>
              <td>{fmt(last(g.util))}</td>
              <td>
                {fmt(last(g.memUsed))} / {fmt(g.memTotal)}
              </td>
              <td>{fmt(last(g.power), 1)}</td>
              <td>{fmt(last(g.temp))}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="gpu-charts">
        {QUANTITIES.map((q) => (
          <GpuChart key={q.key} node={node.node} gpus={node.gpus} q={q} />
        ))}
      </div>
      <details className="gpu-procs" data-testid="gpu-procs" open={node.procs.length > 0 && node.procs.length <= 8}>
        <summary>
          Processes on these GPUs ({node.procs.length}){node.procsAt ? <span className="muted"> · as of {clock(node.procsAt)}</span> : null}
        </summary>
        {node.procs.length ? (
          <table className="gpu-table">
            <thead>
              <tr>
                <th>GPU</th>
                <th>pid</th>
                <th>process</th>
                <th>memory MiB</th>
              </tr>
            </thead>
            <tbody>
              {node.procs.map((p, i) => (
                <tr key={i} data-testid="gpu-proc">
                  <td title={p.gpuUuid}>{p.gpuIndex ?? uuidIndex.get(p.gpuUuid) ?? p.gpuUuid.slice(0, 12)}</td>
                  <td className="mono">{p.pid ?? 'n/a'}</td>
                  <td className="mono gpu-proc-name" title={p.processName ?? undefined}>
                    {p.processName ?? 'n/a'}
                  </td>
                  <td>{fmt(p.usedMemory)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p className="muted">No process holds these GPUs.</p>
        )}
      </details>
    </section>
  );
}

const SAMPLER_WORDS: Record<NonNullable<JobGpu['sampler']>['state'], string> = {
  sampling: 'sampling',
  dropped: 'connection dropped',
  ended: 'ended',
  unavailable: 'not sampled',
};

/** GPU use of the job's nodes: nvidia-smi (or Ray's node stats) over the job's own connection. */
export function GpuPanel({ job }: { job: JobSummary }) {
  const [gpu, setGpu] = useState<JobGpu | null>(null);
  const active = ACTIVE.has(job.state);
  useEffect(() => {
    let alive = true;
    // A poll: a miss is logged, the next one asks again.
    const load = (): void =>
      void attempt('jobs', 'GPU use', () => backend().call('jobs.gpu', { id: job.id, maxPoints: 400 }), { quiet: 'none' }).then((g) => alive && g && setGpu(g));
    load();
    const t = active ? setInterval(load, 3000) : null;
    return () => {
      alive = false;
      if (t) clearInterval(t);
    };
  }, [job.id, active, job.state]);
  const s = gpu?.sampler ?? null;
  return (
    <div className="gpu-panel" data-testid="gpu-panel" data-sampler={s?.state ?? 'none'} data-gpus={gpu?.nodes.some((n) => n.state === 'gpus') ? 'some' : 'none'}>
      <div className="gpu-panel-head">
        <span className="jobs-chart-title">GPU use</span>
        {s ? (
          <span className={`gpu-sampler gpu-sampler-${s.state}`} data-testid="gpu-sampler" title={s.detail}>
            {SAMPLER_WORDS[s.state]}: {s.detail}
          </span>
        ) : (
          <span className="muted gpu-sampler">
            {active ? "read once the job runs: nvidia-smi on its node(s), or Ray's node stats" : 'no GPU use was read for this job'}
          </span>
        )}
      </div>
      {gpu?.nodes.map((n) => <NodeGpus key={n.node} node={n} />)}
    </div>
  );
}
