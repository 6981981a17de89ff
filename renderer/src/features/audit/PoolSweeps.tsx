import { useCallback, useEffect, useState } from 'react';
import type { CallOutput, EventPayload } from '../../../../core/api';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';
import { SweepCard, useFollowElsewhere } from '../../components/SweepCard';
import { openAudit } from './open';
import { SelectionMatches, SELECTION_PLACEHOLDER } from '../../components/SelectionMatches';
import { RunOnPicker, runOnText, type RunOnTarget } from '../../components/RunOnPicker';

type Sweep = EventPayload<'audit.sweepProgress'>;
type Result = CallOutput<'audit.sweepResults'>[number];



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
  const rate = s.envsPerSec !== null ? `${s.envsPerSec.toFixed(1)} envs/s` : 'no rate yet';
  return (
    <SweepCard
      s={s}
      heardAt={heardAt}
      open={open}
      onToggle={onToggle}
      area="audit"
      noun="sweep"
      resume={() => backend().call('audit.sweepResume', { sweepId: s.id })}
      cancel={() => backend().call('audit.sweepCancel', { sweepId: s.id })}
      testIds={{ card: 'sweep', progress: 'sweep-progress', summary: 'sweep-summary' }}
      resultsLabel="Results"
      progressLabel="Auditing"
      progressDetail={`${s.failed} failing · ${rate}`}
      summary={`${s.done} / ${s.total} audited · ${s.failed} failing${s.envsPerSec !== null ? ` · ${rate}` : ''}`}
      results={<Results key={`${s.id}-${s.done}-${s.state}`} sweepId={s.id} />}
    />
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

  const load = useCallback((quiet = false) => {
    void attempt('audit', 'Pool sweeps', () => backend().call('audit.sweeps', { limit: 20 }), quiet ? { quiet: 'none' } : {}).then((list) => list?.forEach(upsert));
  }, [upsert]);
  const reload = useCallback(() => load(true), [load]);
  useFollowElsewhere(sweeps, reload);

  useEffect(() => {
    load();
    return backend().on('audit.sweepProgress', (s) => {
      upsert(s);
      if (s.state !== 'running') {
        onEnded();
        if (s.state === 'done') setOpen(s.id);
      }
    });
  }, [upsert, onEnded, load]);

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
          <input data-testid="sweep-query" value={query} onChange={(e) => setQuery(e.target.value)} placeholder={SELECTION_PLACEHOLDER} spellCheck={false} />
          <SelectionMatches query={query} testId="sweep-query-matches" />
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
