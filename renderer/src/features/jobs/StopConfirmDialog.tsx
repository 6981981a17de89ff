import { useEffect, useRef } from 'react';
import type { JobSummary } from '../../../../core/api/calls/jobs';

/** How each engine is asked to end a job, said before anyone asks it. */
export function stopMeans(j: JobSummary): { engine: string; how: string } {
  const id = j.externalId?.split(':')[0] ?? '?';
  if (j.backend === 'slurm') return { engine: 'Slurm', how: `scancel ${id}` };
  if (j.backend === 'ray') return { engine: 'the Ray head', how: `POST /api/jobs/${id}/stop` };
  return { engine: j.host ?? 'this machine', how: `SIGTERM, then SIGKILL, to process group ${id}` };
}

/**
 * Asked before stopping a job the workbench did not launch (it only follows it): whose it is, which
 * engine ends it and how. Nothing is sent until the person confirms; Esc or Cancel keeps it running.
 */
export function StopConfirmDialog({ job, onConfirm, onClose }: { job: JobSummary; onConfirm: () => void; onClose: () => void }) {
  const keep = useRef<HTMLButtonElement>(null);
  const { engine, how } = stopMeans(job);
  const id = job.externalId?.split(':')[0] ?? '?';
  useEffect(() => {
    keep.current?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') onClose();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);
  return (
    <div className="jobs-dialog-backdrop" role="dialog" aria-modal="true" aria-label="Stop a job the workbench did not launch" data-testid="job-stop-confirm">
      <div className="jobs-dialog jobs-confirm">
        <h2>Stop {job.backend === 'slurm' ? 'Slurm' : 'Ray'} job {id}?</h2>
        <p className="jobs-confirm-owner" data-testid="job-stop-owner">
          {job.owner ?? `${job.backend} job ${id}`}
        </p>
        <p>
          The workbench did not launch this job: it attached to it to follow its log and metrics. Stopping asks {engine} to end it
          (<code>{how}</code>) for whoever started it, and the workbench cannot start it again.
        </p>
        <div className="jobs-actions">
          <button type="button" ref={keep} onClick={onClose} data-testid="job-stop-keep">
            Keep it running
          </button>
          <button type="button" className="danger" onClick={onConfirm} data-testid="job-stop-confirm-button">
            Stop {job.backend === 'slurm' ? 'Slurm' : 'Ray'} job {id}
          </button>
        </div>
      </div>
    </div>
  );
}
