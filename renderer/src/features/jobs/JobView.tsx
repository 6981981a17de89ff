import { useEffect, useState } from 'react';
import { errorMessage, type CallOutput } from '../../../../core/api';
import type { JobSummary } from '../../../../core/api/calls/jobs';
import { backend, log } from '../../store/app';
import type { ViewProps } from '../../views/registry';
import { LogView } from './LogView';
import { MetricsCharts } from './MetricsCharts';
import { STATE_ICON, subscribeJobs, useJobs } from './store';

const ACTIVE = new Set(['submitting', 'pending', 'running', 'suspended']);

/** What the job's results brought into the library, refetched as files come back. */
function useJobImports(jobId: string, filesBack: number): CallOutput<'memory.jobImports'> | null {
  const [back, setBack] = useState<CallOutput<'memory.jobImports'> | null>(null);
  useEffect(() => {
    let alive = true;
    void backend()
      .call('memory.jobImports', { jobId })
      .then((b) => alive && setBack(b))
      .catch(() => {});
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
    void backend()
      .call('jobs.get', { id })
      .then((j) => {
        setLoaded(j);
        useJobs.getState().upsert(j);
      })
      .catch((e: unknown) => log('error', 'jobs', errorMessage(e)));
  }, [id]);
  const active = ACTIVE.has((job ?? loaded)?.state ?? '');
  useEffect(() => {
    // While this page is open the job is followed at the fast pace (Slurm queues are asked rarely otherwise).
    if (!active) return;
    const watch = (): void => void backend().call('jobs.watch', { id }).catch(() => undefined);
    watch();
    const t = setInterval(watch, 30_000);
    return () => clearInterval(t);
  }, [id, active]);
  const j = job ?? loaded;
  const back = useJobImports(id, j?.filesBack ?? 0);
  if (!j) return <div className="jobs-view muted">Loading job…</div>;
  const stop = async () => {
    try {
      useJobs.getState().upsert(await backend().call('jobs.stop', { id }));
    } catch (e) {
      log('error', 'jobs', `Stop failed: ${errorMessage(e)}`);
    }
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
        {ACTIVE.has(j.state) ? (
          <button onClick={() => void stop()} data-testid="job-stop">
            Stop
          </button>
        ) : null}
      </header>
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
      <div className="jobs-body">
        <MetricsCharts job={j} />
        <LogView jobId={j.id} jobName={j.name} />
      </div>
    </div>
  );
}
