import { useCallback, useEffect, useState } from 'react';
import type { CallOutput, EventPayload } from '../../../../core/api';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';
import { ProgressLine } from '../../components/ProgressLine';
import { openAudit } from './open';
import { RunOnPicker, runOnText, type RunOnTarget } from '../../components/RunOnPicker';

type Sweep = EventPayload<'audit.sweepProgress'>;
type Result = CallOutput<'audit.sweepResults'>[number];

const STATE_TEXT: Record<Sweep['state'], string> = {
  running: 'running',
  interrupted: 'interrupted (the workbench stopped while it ran)',
  done: 'done',
  cancelled: 'cancelled',
  failed: 'failed',
};


function Results({ sweepId }: { sweepId: string }) {
  const [rows, setRows] = useState<Result[] | null>(null);
  useEffect(() => {
    void attempt('audit', 'Sweep results', () => backend().call('audit.sweepResults', { sweepId })).then((r) => r && setRows(r));
  }, [sweepId]);
  if (!rows) return <p className="muted">Loading the results…</p>;
  const order = { fail: 0, warn: 1, pass: 2 } as const;
  const sorted = [...rows].sort((a, b) => (a.verdict === null ? 3 : order[a.verdict]) - (b.verdict === null ? 3 : order[b.verdict]) || a.name.localeCompare(b.name));
  return (
    <ul className="sweep-results" data-testid="sweep-results">
      {sorted.map((r) => (
        <li key={r.hash}>
          {r.verdict ? <span className={`audit-badge ${r.verdict}`}>{r.verdict}</span> : <span className="muted">no result</span>}
          {r.envId !== null ? (
            <button className="audit-link" onClick={() => openAudit(r.envId!, r.name)}>
              {r.name}
            </button>
          ) : (
            <span>{r.name}</span>
          )}
          {r.spadeAccepts === false && <span className="muted">SPADE rejects</span>}
          {r.failing.length > 0 && <span className="muted sweep-failing">{r.failing.join(', ')}</span>}
        </li>
      ))}
    </ul>
  );
}

function SweepRow({ s, heardAt, open, onToggle }: { s: Sweep; heardAt: number; open: boolean; onToggle(): void }) {
  const [busy, setBusy] = useState(false);
  const act = (call: () => Promise<unknown>) => {
    setBusy(true);
    void attempt('audit', 'Sweep', call).then(() => setBusy(false));
  };
  const rate = s.envsPerSec !== null ? `${s.envsPerSec.toFixed(1)} envs/s` : 'no rate yet';
  const resumable = s.state === 'interrupted' || s.state === 'cancelled' || s.state === 'failed';
  return (
    <li className={`sweep sweep-${s.state}`} data-testid="sweep" data-sweep={s.id} data-state={s.state}>
      <div className="sweep-head">
        <code>{s.query || 'every environment'}</code>
        <span>on {runOnText(s.target)}</span>
        <span className={`sweep-state ${s.state}`}>{STATE_TEXT[s.state]}</span>
        <span className="muted">{new Date(s.createdAt).toLocaleString()}</span>
        {resumable && (
          <button disabled={busy} onClick={() => act(() => backend().call('audit.sweepResume', { sweepId: s.id }))}>
            Resume ({s.done}/{s.total})
          </button>
        )}
        {s.state === 'interrupted' && (
          <button disabled={busy} onClick={() => act(() => backend().call('audit.sweepCancel', { sweepId: s.id }))}>
            Cancel
          </button>
        )}
        {s.done > 0 && (
          <button className="audit-link" aria-expanded={open} onClick={onToggle}>
            {open ? 'Hide results' : 'Results'}
          </button>
        )}
      </div>
      {s.state === 'running' ? (
        <ProgressLine
          testId="sweep-progress"
          label={s.phase === 'submitting' && s.target !== 'local' ? 'Submitting' : 'Auditing'}
          startedAt={heardAt}
          done={s.done}
          total={s.total}
          detail={`${s.failed} failing · ${rate}`}
          cancelling={busy}
          onCancel={() => act(() => backend().call('audit.sweepCancel', { sweepId: s.id }))}
        />
      ) : (
        <div className="sweep-summary" data-testid="sweep-summary">
          <div className="progress-bar" role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={s.total ? Math.round((100 * s.done) / s.total) : 100}>
            <div style={{ width: `${s.total ? Math.max(2, (100 * s.done) / s.total) : 100}%` }} />
          </div>
          <span>
            {s.done} / {s.total} audited · {s.failed} failing{s.envsPerSec !== null ? ` · ${rate}` : ''}
          </span>
        </div>
      )}
      {s.message && <p className={s.state === 'failed' ? 'audit-error' : 'muted'}>{s.message}</p>}
      {open && s.done > 0 && <Results key={`${s.id}-${s.done}-${s.state}`} sweepId={s.id} />}
    </li>
  );
}

/**
 * Pool audit sweeps: the Library's environments matching a query, audited on this machine, on a
 * saved job host's Slurm or on a Ray cluster, as `audit --pool` does; state stays in this view.
 */
export function PoolSweeps({ onEnded }: { onEnded(): void }) {
  const [query, setQuery] = useState('');
  const [target, setTarget] = useState<RunOnTarget>({ kind: 'local' });
  const [sweeps, setSweeps] = useState<Sweep[]>([]);
  const [heard, setHeard] = useState<Record<string, number>>({});
  const [open, setOpen] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [starting, setStarting] = useState(false);

  const upsert = useCallback((s: Sweep) => {
    setSweeps((list) => (list.some((x) => x.id === s.id) ? list.map((x) => (x.id === s.id ? s : x)) : [s, ...list]));
    // A resumed sweep's clock starts again: elapsed is this run's.
    setHeard((h) => (s.state === 'running' && h[s.id] === undefined ? { ...h, [s.id]: Date.now() } : s.state !== 'running' && h[s.id] !== undefined ? (({ [s.id]: _, ...rest }) => rest)(h) : h));
  }, []);

  useEffect(() => {
    void attempt('audit', 'Pool sweeps', () => backend().call('audit.sweeps', { limit: 20 })).then((list) => list?.forEach(upsert));
    return backend().on('audit.sweepProgress', (s) => {
      upsert(s);
      if (s.state !== 'running') {
        onEnded();
        if (s.state === 'done') setOpen(s.id);
      }
    });
  }, [upsert, onEnded]);

  const start = () => {
    setStarting(true);
    setError(null);
    void attempt('audit', 'Start the sweep', () => backend().call('audit.poolStart', { query: query.trim(), target }), { show: setError }).then((s) => {
      setStarting(false);
      if (s) upsert(s);
    });
  };

  return (
    <section className="sweeps" data-testid="pool-sweeps" aria-label="Pool audit sweeps">
      <h3>Audit a pool here or on a cluster</h3>
      <form
        className="sweep-form"
        onSubmit={(e) => {
          e.preventDefault();
          start();
        }}
      >
        <label>
          Environments
          <input data-testid="sweep-query" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="Library search (empty: every environment)" spellCheck={false} />
        </label>
        <RunOnPicker label="Run on" testPrefix="sweep" onChange={setTarget} />
        <button type="submit" disabled={starting} data-testid="sweep-start">
          {starting ? 'Starting…' : 'Start'}
        </button>
      </form>
      {error && (
        <p className="audit-error" role="alert" data-testid="sweep-error">
          {error}
        </p>
      )}
      {sweeps.length > 0 && (
        <ul className="sweep-list">
          {sweeps.map((s) => (
            <SweepRow key={s.id} s={s} heardAt={heard[s.id] ?? Date.now()} open={open === s.id} onToggle={() => setOpen((o) => (o === s.id ? null : s.id))} />
          ))}
        </ul>
      )}
    </section>
  );
}
