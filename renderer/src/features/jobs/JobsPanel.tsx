import { useEffect, useState } from 'react';
import { useWorkbench } from '../../store/workbench';
import { AttachDialog } from './AttachDialog';
import { LaunchDialog } from './LaunchDialog';
import { STATE_ICON, subscribeJobs, useJobs } from './store';

export function openJob(id: string, name: string): void {
  useWorkbench.getState().openTab({ kind: 'job', jobId: id }, name);
}

/** The Jobs side panel: every job with its state, and the launch dialog. */
export function JobsPanel() {
  const jobs = useJobs((s) => s.jobs);
  const loaded = useJobs((s) => s.loaded);
  const launchOpen = useJobs((s) => s.launchOpen);
  const setLaunchOpen = useJobs((s) => s.setLaunchOpen);
  const [attachOpen, setAttachOpen] = useState(false);
  useEffect(() => subscribeJobs(), []);
  return (
    <div className="jobs-panel" data-testid="jobs-panel">
      <div className="jobs-toolbar">
        <button className="primary" data-testid="jobs-new" onClick={() => setLaunchOpen(true)}>
          New job…
        </button>
        <button data-testid="jobs-attach-open" onClick={() => setAttachOpen(true)} title="Follow a Ray or Slurm job started elsewhere (SPADE's own launch scripts)">
          Attach…
        </button>
      </div>
      {loaded && jobs.length === 0 ? <p className="muted jobs-empty">No jobs yet. Launch the example run to try the whole loop without a GPU.</p> : null}
      <ul className="jobs-list" role="list">
        {jobs.map((j) => (
          <li key={j.id} className={`jobs-item state-${j.state}`} data-testid="jobs-item" data-state={j.state} onClick={() => openJob(j.id, j.name)} title={j.detail}>
            <span className="jobs-state" aria-label={j.state}>
              {STATE_ICON[j.state]}
            </span>
            <span className="jobs-name">{j.name}</span>
            <span className="jobs-meta muted">
              {j.backend}
              {j.host ? ` · ${j.host}` : ''} · {j.state}
              {j.attached ? ' · attached' : ''}
            </span>
          </li>
        ))}
      </ul>
      {launchOpen ? <LaunchDialog onClose={() => setLaunchOpen(false)} /> : null}
      {attachOpen ? <AttachDialog onClose={() => setAttachOpen(false)} /> : null}
    </div>
  );
}
