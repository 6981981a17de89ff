import { useEffect, useState } from 'react';
import type { CallOutput } from '../../../../core/api';
import type { JobSummary } from '../../../../core/api/calls/jobs';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';
import type { ViewProps } from '../../views/registry';
import { ArtefactsPanel } from './ArtefactsPanel';
import { GpuPanel } from './GpuPanel';
import { LogView } from './LogView';
import { MetricsCharts } from './MetricsCharts';
import { StopConfirmDialog } from './StopConfirmDialog';
import { TrainPanel } from './TrainPanel';
import { STATE_ICON, subscribeJobs, useJobs } from './store';

const ACTIVE = new Set(['submitting', 'pending', 'running', 'suspended']);

/** What the job's results brought into the library, refetched as files come back. */
function useJobImports(jobId: string, filesBack: number): CallOutput<'memory.jobImports'> | null {
  const [back, setBack] = useState<CallOutput<'memory.jobImports'> | null>(null);
  useEffect(() => {
    let alive = true;
    // Refetched as each file comes back: a miss is logged, the next file asks again.
    void attempt('jobs', 'Results back in the library', () => backend().call('memory.jobImports', { jobId }), { quiet: 'warn' }).then((b) => alive && b && setBack(b));
    return () => {
      alive = false;
    };
  }, [jobId, filesBack]);
  return back;
}

/** One job: its state, log (xterm.js) and metric charts (uPlot). */
export function JobView({ tab }: ViewProps<'job'>) {
  const id = tab.target.jobId;
  const job = useJobs((s) => s.jobs.find((j) => j.id === id));
  const [loaded, setLoaded] = useState<JobSummary | null>(null);
  useEffect(() => {
    subscribeJobs();
    // A job that cannot be read says why in the status bar (it was only logged, under "Loading job…").
    void attempt('jobs', 'Open the job', () => backend().call('jobs.get', { id })).then((j) => {
      if (!j) return;
      setLoaded(j);
      useJobs.getState().upsert(j);
    });
  }, [id]);
  const active = ACTIVE.has((job ?? loaded)?.state ?? '');
  useEffect(() => {
    // While this page is open the job is followed at the fast pace (Slurm queues are asked rarely otherwise).
    if (!active) return;
    // A poll: the job's state line says what is known, and the next one asks again.
    const watch = (): void => void attempt('jobs', 'Follow the job', () => backend().call('jobs.watch', { id }), { quiet: 'none' });
    watch();
    const t = setInterval(watch, 30_000);
    return () => clearInterval(t);
  }, [id, active]);
  const j = job ?? loaded;
  const back = useJobImports(id, j?.filesBack ?? 0);
  const [confirming, setConfirming] = useState(false);
  const [stopping, setStopping] = useState(false);
  /** What the engine answered the last stop (or why it refused), shown as said. */
  const [answer, setAnswer] = useState<{ ok: boolean; text: string } | null>(null);
  if (!j) return <div className="jobs-view muted">Loading job…</div>;
  const stop = async (confirmAttached: boolean) => {
    setConfirming(false);
    setStopping(true);
    // The engine's refusal is shown as said, in the answer line under the header ("Not stopped: …").
    const r = await attempt('jobs', 'Stop failed', () => backend().call('jobs.stop', { id, confirmAttached }), { show: (text) => setAnswer({ ok: false, text }) });
    setStopping(false);
    if (!r) return;
    const { stopAnswer, ...summary } = r;
    useJobs.getState().upsert(summary);
    setAnswer({ ok: true, text: stopAnswer });
  };
  return (
    <div className="jobs-view" data-testid="job-view" data-state={j.state}>
      <header className="jobs-head">
        <span className={`jobs-badge state-${j.state}`} data-testid="job-state">
          {STATE_ICON[j.state]} {j.state}
        </span>
        <h2>{j.name}</h2>
        <span className="muted">
          {j.backend}
          {j.host ? ` on ${j.host}` : ''}
          {j.externalId ? ` · ${j.backend === 'slurm' ? 'Slurm job' : j.backend === 'ray' ? 'submission' : 'pid'} ${j.externalId.split(':')[0]}` : ''} · {j.filesBack} files back
        </span>
        <span className="jobs-detail muted" title={j.detail}>
          {j.detail}
        </span>
        {j.attached ? (
          <span className="jobs-chip" title={j.owner ?? undefined} data-testid="job-attached">
            attached: not launched here
          </span>
        ) : null}
        {ACTIVE.has(j.state) ? (
          <button onClick={() => (j.attached ? setConfirming(true) : void stop(false))} disabled={stopping} data-testid="job-stop">
            {stopping ? 'Stopping…' : 'Stop'}
          </button>
        ) : null}
      </header>
      {answer ? (
        <div className={`jobs-stop-answer ${answer.ok ? '' : 'jobs-error'}`} role="status" data-testid="job-stop-answer">
          {answer.ok ? 'Stop: ' : 'Not stopped: '}
          <span className="mono">{answer.text}</span>
        </div>
      ) : null}
      {confirming ? <StopConfirmDialog job={j} onConfirm={() => void stop(true)} onClose={() => setConfirming(false)} /> : null}
      {back && back.imports > 0 ? (
        <div className="jobs-back muted" data-testid="job-results-back">
          Back in the library: {back.imported} new, {back.updated} updated, {back.unchanged} unchanged · stats attached to {back.statsAttached}
          {back.skipped ? (
            <span title={back.examples.map((k) => `${k.path}: ${k.reason}`).join('\n')}>
              {' '}
              · {back.skipped} skipped{back.recordsUnmatched ? ` (${back.recordsUnmatched} env_memory records name a game not in the library)` : ''}
            </span>
          ) : null}
        </div>
      ) : null}
      {/* A local GRPO run has LoRA adapters and model-run evaluations, not SPADE's checkpoints. */}
      {j.recipe === 'train-grpo' ? <TrainPanel job={j} /> : <ArtefactsPanel job={j} />}
      <div className="jobs-body">
        <div className="jobs-top">
          <MetricsCharts job={j} />
          <GpuPanel job={j} />
        </div>
        <LogView jobId={j.id} jobName={j.name} />
      </div>
    </div>
  );
}
