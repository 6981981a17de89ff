import { useCallback, useEffect, useState } from 'react';
import type { JobArtefacts, JobSummary } from '../../../../core/api/calls/jobs';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';
import { openJob } from './JobsPanel';
import { useJobs } from './store';

type Eval = JobArtefacts['evals'][number];
type Cell = Eval['suites'][number]['metrics'][string];

const cell = (v: Cell | undefined): string => (v === undefined || v === null ? '–' : typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(4)) : String(v));
const column = (e: Eval): string => (e.step !== null ? `step ${e.step}` : (e.ckpt.split('/').filter(Boolean).pop() ?? e.path));

/** One row per suite and metric, one column per evaluated checkpoint (in step order), as results.json holds them. */
function EvalTable({ evals }: { evals: Eval[] }) {
  const rows: { suite: string; metric: string; values: (Cell | undefined)[]; status?: boolean }[] = [];
  const index = new Map<string, number>();
  evals.forEach((e, i) => {
    for (const s of e.suites) {
      const put = (metric: string, v: Cell, status = false) => {
        const k = `${s.name}\u0000${metric}`;
        let at = index.get(k);
        if (at === undefined) {
          index.set(k, (at = rows.length));
          rows.push({ suite: s.name, metric, values: [], status });
        }
        rows[at]!.values[i] = v;
      };
      if (s.skipped || s.error) put('(not run)', s.skipped ? 'skipped' : `error: ${s.error}`, true);
      for (const [m, v] of Object.entries(s.metrics)) put(m, v);
    }
  });
  return (
    <table className="jobs-eval" data-testid="job-eval-table">
      <thead>
        <tr>
          <th>suite</th>
          <th>metric</th>
          {evals.map((e) => (
            <th key={e.path} title={`${e.ckpt}\n${e.path}${e.startedAt ? `\nstarted ${e.startedAt}` : ''}`} data-testid="job-eval-col">
              {column(e)}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((r, i) => (
          <tr key={`${r.suite}/${r.metric}`} data-testid="job-eval-row" className={r.status ? 'muted' : undefined}>
            <td>{i === 0 || rows[i - 1]!.suite !== r.suite ? r.suite : ''}</td>
            <td className="mono">{r.metric}</td>
            {evals.map((e, j) => (
              <td key={e.path} className="num">
                {cell(r.values[j])}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * A run's checkpoints and SPADE's offline evaluation (eval_offline's results.json per checkpoint),
 * read from its folder over the job's connection when the job opens, ends, or on Refresh; and
 * "continue this run" where the recipe's script reads LOAD_DIR.
 */
export function ArtefactsPanel({ job }: { job: JobSummary }) {
  const [a, setA] = useState<JobArtefacts | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => {
    setBusy(true);
    const r = await attempt('jobs', "Read the run's artefacts", () => backend().call('jobs.artefacts', { id: job.id }), { show: (t) => setError(t) });
    setBusy(false);
    if (r) {
      setA(r);
      setError(null);
    }
  }, [job.id]);
  useEffect(() => {
    void load();
  }, [load, job.state]);
  const [continuing, setContinuing] = useState(false);
  const resume = async () => {
    setContinuing(true);
    const j = await attempt('jobs', 'Continue the run', () => backend().call('jobs.continue', { id: job.id }), { show: (t) => setError(t) });
    setContinuing(false);
    if (!j) return;
    useJobs.getState().upsert(j);
    openJob(j.id, j.name);
  };
  const latest = a?.checkpoints.find((c) => c.latest);
  const evaluated = a?.evals.length ?? 0;
  return (
    <details className="jobs-artefacts" data-testid="job-artefacts" data-checkpoints={a?.checkpoints.length ?? -1} data-evals={evaluated}>
      <summary>
        Checkpoints: {a ? (a.checkpoints.length ? `${a.checkpoints.length}${latest ? `, latest step ${latest.step ?? 'release'}` : ''}` : 'none') : '…'}
        {' · '}offline evaluation: {a ? (evaluated ? `${evaluated} checkpoint${evaluated > 1 ? 's' : ''}` : 'none') : '…'}
      </summary>
      <div className="jobs-artefacts-bar">
        <span className="muted">
          Run folder <span className="mono">{a?.runDir ?? '—'}</span>
        </span>
        <button onClick={() => void load()} disabled={busy} data-testid="job-artefacts-refresh">
          {busy ? 'Reading…' : 'Refresh'}
        </button>
        <button onClick={() => void resume()} disabled={!a?.continuable || continuing} title={a?.continueNote} data-testid="job-continue">
          {a?.continuable ? `Continue from step ${a.continuable.step}` : 'Continue this run'}
        </button>
        <span className="muted jobs-artefacts-note" data-testid="job-continue-note">
          {a ? (a.continuable ? `LOAD_DIR=${a.continuable.loadDir}` : `Cannot continue: ${a.continueNote}`) : ''}
        </span>
      </div>
      {error ? <p className="jobs-error">{error}</p> : null}
      {a?.note ? <p className="muted">{a.note}</p> : null}
      {a && a.checkpoints.length ? (
        <table className="jobs-ckpts" data-testid="job-checkpoints">
          <thead>
            <tr>
              <th>step</th>
              <th>checkpoint</th>
              <th>saved</th>
            </tr>
          </thead>
          <tbody>
            {a.checkpoints.slice(0, 200).map((c) => (
              <tr key={`${c.kind}:${c.path}:${c.name}`} data-testid="job-checkpoint-row" data-step={c.step ?? ''} data-latest={c.latest}>
                <td className="num">{c.step ?? 'release'}</td>
                <td className="mono" title={[c.path, c.samplerPath].filter(Boolean).join('\n')}>
                  {a.runDir && c.path.startsWith(`${a.runDir}/`) ? c.path.slice(a.runDir.length + 1) : c.path}
                  {c.latest ? <span className="jobs-chip">{c.kind === 'tinker' ? 'resumes here' : 'latest'}</span> : null}
                </td>
                <td className="muted jobs-nowrap">{c.mtime ? new Date(c.mtime * 1000).toISOString().slice(0, 16).replace('T', ' ') : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {a && evaluated ? (
        <>
          <p className="muted jobs-artefacts-caption">SPADE&apos;s offline evaluation (eval_offline results.json), as the file holds each value (fractions, not percent):</p>
          <EvalTable evals={a.evals} />
        </>
      ) : null}
      {a?.problems.length ? (
        <ul className="jobs-artefacts-problems" data-testid="job-artefacts-problems">
          {a.problems.map((p) => (
            <li key={p.path + p.message}>
              <span className="mono">{p.path}</span>: {p.message}
            </li>
          ))}
        </ul>
      ) : null}
    </details>
  );
}
