import { useEffect, useState } from 'react';
import type { EnvDetail } from '../../../../core/api';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';
import { useWorkbench } from '../../store/workbench';
import { openEnvironment } from './open';

interface Parent {
  name: string;
  file?: string;
  sha256: string;
}

/** The parents a run's `<stem>.json` named (kept by the importer under meta.spec, or meta itself). */
export function parentsOf(meta: Record<string, unknown>): Parent[] {
  const spec = meta.spec && typeof meta.spec === 'object' ? (meta.spec as Record<string, unknown>) : {};
  const list = Array.isArray(spec.parents) ? spec.parents : Array.isArray(meta.parents) ? meta.parents : [];
  return list.filter(
    (p): p is Parent => !!p && typeof p === 'object' && typeof (p as Parent).sha256 === 'string' && /^[0-9a-f]{64}$/.test((p as Parent).sha256) && typeof (p as Parent).name === 'string',
  );
}

/**
 * Where an environment came from: the job whose run wrote it (when that job is known here) and the
 * environments it was made from, each opening its own page when the library holds it.
 */
export function MadeBy({ env }: { env: EnvDetail }) {
  const parents = parentsOf(env.meta);
  const [job, setJob] = useState<{ id: string; name: string } | null>(null);
  const [held, setHeld] = useState<Record<string, number>>({});
  useEffect(() => {
    let alive = true;
    setJob(null);
    // Imports carry a job id too (the seed pack's is not a job): only a real job is named.
    if (env.jobId)
      void attempt('library', 'Job', () => backend().call('jobs.get', { id: env.jobId! }), { quiet: 'warn' }).then((j) => j && alive && setJob({ id: j.id, name: j.name }));
    return () => {
      alive = false;
    };
  }, [env.jobId]);
  const key = parents.map((p) => p.sha256).join(',');
  useEffect(() => {
    let alive = true;
    for (const p of parents)
      // A parent not in the library is shown by its hash alone.
      void attempt('library', 'Parent version', () => backend().call('memory.version', { hash: p.sha256 }), { quiet: 'debug' }).then((v) => v && alive && setHeld((h) => ({ ...h, [p.sha256]: v.envId })));
    return () => {
      alive = false;
    };
  }, [key]);
  if (!job && parents.length === 0) return null;
  return (
    <div className="env-made-by" data-testid="env-made-by">
      {job ? (
        <div>
          Made by job{' '}
          <button className="link" onClick={() => useWorkbench.getState().openTab({ kind: 'job', jobId: job.id }, job.name)}>
            {job.name}
          </button>
          {env.rolloutStep !== null ? ` in rollout ${env.rolloutStep}` : ''}
        </div>
      ) : null}
      {parents.map((p) => (
        <div key={p.sha256} data-testid="env-parent">
          from{' '}
          {held[p.sha256] !== undefined ? (
            <button className="link" onClick={() => openEnvironment(held[p.sha256]!, p.name)}>
              {p.name}
            </button>
          ) : (
            <span title="not in this library">{p.name}</span>
          )}{' '}
          <span className="muted mono" title={p.sha256}>
            {p.sha256.slice(0, 12)}
          </span>
        </div>
      ))}
    </div>
  );
}
