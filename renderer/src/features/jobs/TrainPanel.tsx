import { useCallback, useEffect, useState } from 'react';
import type { JobSummary } from '../../../../core/api/calls/jobs';
import type { TrainRun } from '../../../../core/api/calls/train';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';
import { openRuns } from '../runs/open';
import { openJob } from './JobsPanel';
import { useJobs } from './store';

const ACTIVE = new Set(['submitting', 'pending', 'running', 'suspended']);
/** An adapter by its folder's name (adapter-final, checkpoint-N); the whole path is its tooltip. */
const adapterName = (p: string): string => p.split('/').filter(Boolean).pop() ?? p;

/**
 * A local GRPO job (train-grpo): its saved adapters, each with Evaluate (base and that adapter on the
 * held-back seeds, hinted and unhinted, as two model runs, in a new job), and each finished
 * evaluation with Compare (Runs → compare, base as A, checkpoint as B).
 */
export function TrainPanel({ job }: { job: JobSummary }) {
  const [run, setRun] = useState<TrainRun | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const load = useCallback(async () => {
    const r = await attempt('jobs', "Read the training run's adapters", () => backend().call('train.checkpoints', { id: job.id }), { show: (t) => setError(t) });
    if (r) (setRun(r), setError(null));
  }, [job.id]);
  const active = ACTIVE.has(job.state);
  useEffect(() => {
    void load();
    // While it trains, adapters (--save-every) appear: read again now and then.
    if (!active) return;
    const t = setInterval(() => void load(), 15_000);
    return () => clearInterval(t);
  }, [load, job.state, active]);
  const evaluate = async (adapter: string) => {
    setBusy(adapter);
    const j = await attempt('jobs', 'Evaluate the checkpoint', () => backend().call('train.evaluate', { id: job.id, adapter }), { show: (t) => setError(t) });
    setBusy(null);
    if (!j) return;
    useJobs.getState().upsert(j);
    openJob(j.id, j.name);
  };
  const evals = run?.evaluations ?? [];
  return (
    <section className="jobs-artefacts jobs-train" data-testid="train-panel" data-checkpoints={run?.checkpoints.length ?? -1} data-evaluations={evals.length}>
      <div className="jobs-artefacts-bar">
        <strong>Local GRPO run</strong>
        <span className="muted">
          Run folder <span className="mono">{run?.runDir ?? '—'}</span>
        </span>
        <button onClick={() => void load()} data-testid="train-refresh">
          Refresh
        </button>
      </div>
      {error ? <p className="jobs-error">{error}</p> : null}
      {run?.note ? <p className="muted">{run.note}</p> : null}
      {evals.length ? (
        <table className="jobs-ckpts" data-testid="train-evaluations">
          <thead>
            <tr>
              <th>evaluated</th>
              <th>before (base)</th>
              <th>after (checkpoint)</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {evals.map((e) => (
              <tr key={`${e.base}:${e.checkpoint}`} data-testid="train-evaluation">
                <td className="mono" title={e.adapter}>
                  {adapterName(e.adapter)}
                </td>
                <td className="mono">{e.base}</td>
                <td className="mono">{e.checkpoint}</td>
                <td>
                  <button onClick={() => openRuns(e.base, e.checkpoint)} data-testid="train-compare" title="Runs → compare: regret and win rate per environment, and the deltas">
                    Compare
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {run && run.checkpoints.length ? (
        <table className="jobs-ckpts" data-testid="train-checkpoints">
          <thead>
            <tr>
              <th>adapter</th>
              <th>step</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {run.checkpoints.map((c) => (
              <tr key={c.path} data-testid="train-checkpoint" data-name={c.name}>
                <td className="mono" title={c.path}>
                  {c.name}
                </td>
                <td className="num">{c.step ?? 'final'}</td>
                <td>
                  <button
                    onClick={() => void evaluate(c.path)}
                    disabled={active || busy !== null}
                    title={active ? 'Evaluate once the job has ended (it uses the same machine)' : 'Base and this adapter on the held-back seeds, hinted and unhinted, as two model runs (a new job)'}
                    data-testid="train-evaluate"
                  >
                    {busy === c.path ? 'Launching…' : 'Evaluate'}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : run && !evals.length ? (
        <p className="muted" data-testid="train-no-checkpoints">
          No adapter saved yet{active ? ' (adapter-final when training ends; TRAIN_SAVE_EVERY=N saves checkpoint-N on the way)' : ''}.
        </p>
      ) : null}
    </section>
  );
}
