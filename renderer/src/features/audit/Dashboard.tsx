import { useCallback, useEffect, useRef, useState } from 'react';
import type { CallOutput, EventPayload } from '../../../../core/api';
import { backend } from '../../store/app';
import { useCall } from '../../store/useCall';
import { ErrorText } from '../../components/ErrorText';
import { useWorkbench } from '../../store/workbench';
import type { ViewProps } from '../../views/registry';
import { openAudit } from './open';
import { ProgressLine, remaining, useNow } from '../../components/ProgressLine';
import { PoolSweeps } from './PoolSweeps';

type Summary = CallOutput<'audit.summary'>;
type Progress = EventPayload<'audit.progress'>;
type Batch = CallOutput<'audit.batches'>[number];

/** When the progress was heard (client clock): an estimate counts down from there, it does not freeze. */
interface Heard {
  batchId: string;
  startedAt: number;
  at: number;
  lastResultAt: number;
  done: number;
}

/** Share of environments failing each check, as horizontal bars; a bar click lists those environments. */
function Bars({ s, onPick, picked }: { s: Summary; onPick(id: string): void; picked: string | null }) {
  const rows = s.byCheck.filter((c) => c.fail + c.warn > 0 || c.id.startsWith('spade.'));
  const rowH = 22;
  const labelW = 150;
  const barW = 360;
  const h = rows.length * rowH + 24;
  return (
    // Scales down with its pane (viewBox) instead of being cut at narrow widths; never larger than drawn.
    <svg className="audit-bars" viewBox={`0 0 ${labelW + barW + 70} ${h}`} style={{ width: '100%', maxWidth: labelW + barW + 70 }} role="img" aria-label="Share of environments failing each check">
      {[0, 0.25, 0.5, 0.75, 1].map((t) => (
        <g key={t}>
          <line x1={labelW + t * barW} x2={labelW + t * barW} y1={0} y2={h - 18} className="audit-grid" />
          <text x={labelW + t * barW} y={h - 4} textAnchor="middle" className="audit-axis">
            {Math.round(t * 100)}%
          </text>
        </g>
      ))}
      {rows.map((c, i) => {
        const y = i * rowH + 2;
        const fail = s.audited ? c.fail / s.audited : 0;
        const warn = s.audited ? c.warn / s.audited : 0;
        return (
          <g key={c.id} className={`audit-bar-row${picked === c.id ? ' picked' : ''}`} onClick={() => onPick(c.id)} data-check={c.id} style={{ cursor: 'pointer' }}>
            <rect x={0} y={y - 1} width={labelW + barW + 70} height={rowH - 2} className="audit-bar-hit" />
            <text x={labelW - 6} y={y + 14} textAnchor="end" className="audit-label">
              {c.id}
            </text>
            <rect x={labelW} y={y + 3} width={Math.max(fail * barW, c.fail ? 2 : 0)} height={rowH - 8} className="audit-bar fail" />
            <rect x={labelW + fail * barW} y={y + 3} width={warn * barW} height={rowH - 8} className="audit-bar warn" />
            <text x={labelW + (fail + warn) * barW + 6} y={y + 14} className="audit-value">
              {(fail * 100).toFixed(1)}%{c.warn ? ` +${(warn * 100).toFixed(1)}% warn` : ''}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

export function AuditDashboard(_: ViewProps<'audit-dashboard'>) {
  const [s, setS] = useState<Summary | null>(null);
  const [progress, setProgress] = useState<Progress | null>(null);
  const [heard, setHeard] = useState<Heard | null>(null);
  const [batches, setBatches] = useState<Batch[]>([]);
  const [picked, setPicked] = useState<string | null>(null);
  const [envs, setEnvs] = useState<{ id: number; name: string }[]>([]);
  const [failTotal, setFailTotal] = useState(0);

  // One line under the header says why the last thing asked of the pool failed (it was only logged before).
  const { error, run } = useCall('audit');
  const refresh = useCallback(async () => {
    await run('Pool audit summary', async () => {
      setS(await backend().call('audit.summary', {}));
      setBatches(await backend().call('audit.batches', { limit: 5 }));
    });
  }, [run]);

  // The counts follow every audit stored and every library change, not only the pool's batches: an
  // environment fixed and audited again from its own page (or a new version saved, which changes the
  // head versions counted) moves the header at once, without a reload. A burst comes in as one read.
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const soon = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        void refresh();
        // The list of a picked check's failing environments follows too (the fixed one leaves it).
        if (pickedRef.current) void pickRef.current(pickedRef.current);
      }, 250);
    };
    const offRun = backend().on('audit.runProgress', (p) => p.state === 'done' && soon());
    const offMemory = backend().on('memory.changed', soon);
    const offSweep = backend().on('audit.sweepProgress', (p) => p.state !== 'running' && soon());
    return () => {
      clearTimeout(timer);
      offRun();
      offMemory();
      offSweep();
    };
  }, [refresh]);

  useEffect(() => {
    void refresh();
    let last = 0;
    return backend().on('audit.progress', (p) => {
      setProgress(p);
      const now = Date.now();
      setHeard((h) =>
        h && h.batchId === p.batchId
          ? { ...h, at: now, lastResultAt: p.done !== h.done ? now : h.lastResultAt, done: p.done }
          : { batchId: p.batchId, startedAt: now, at: now, lastResultAt: now, done: p.done },
      );
      if (p.state !== 'running' || Date.now() - last > 1500) {
        last = Date.now();
        void refresh();
      }
    });
  }, [refresh]);

  const pick = (id: string) =>
    run('Failing environments', async () => {
      setPicked(id);
      const { ids } = await backend().call('audit.environments', { checkId: id, status: 'fail' });
      setFailTotal(ids.length);
      // The first hundred by name here; "show in library" lists them all.
      const rows = await Promise.all(ids.slice(0, 100).map(async (eid) => ({ id: eid, name: (await backend().call('memory.get', { id: eid })).name })));
      setEnvs(rows);
    });

  const pickedRef = useRef(picked);
  pickedRef.current = picked;
  const pickRef = useRef(pick);
  pickRef.current = pick;

  // Running from the click on, not from the first finished environment.
  const start = () =>
    run('Audit all', async () => {
      const { batchId, total } = await backend().call('audit.batch', { all: true });
      const now = Date.now();
      setHeard((h) => (h?.batchId === batchId ? h : { batchId, startedAt: now, at: now, lastResultAt: now, done: 0 }));
      setProgress((p) => (p?.batchId === batchId ? p : { batchId, state: 'running', done: 0, total, failed: 0, etaSec: null, lastHash: null }));
    });
  const running = progress?.state === 'running' ? progress : null;
  const now = useNow(running !== null);
  const resumable = batches.find((b) => b.state === 'cancelled' || (b.state === 'running' && !running));

  return (
    <div className="audit-dash" data-testid="audit-dashboard">
      <header className="audit-head">
        <h2>Pool audit</h2>
        {s && (
          <span className="muted">
            {s.audited} of {s.environments} environments audited · {s.verdicts.fail} fail · {s.verdicts.warn} warn · {s.verdicts.pass} pass · SPADE accepts {s.spadeAccepted}
          </span>
        )}
        {!running && <button onClick={() => void start()}>Audit all</button>}
        {!running && resumable && <button onClick={() => void run('Resume', () => backend().call('audit.resume', { batchId: resumable.id }))}>Resume ({resumable.done}/{resumable.total})</button>}
      </header>
      <ErrorText error={error} />
      {running && (
        <div className="audit-progress" data-testid="audit-progress">
          <ProgressLine
            testId="audit-batch"
            label="Auditing"
            startedAt={heard?.batchId === running.batchId ? heard.startedAt : now}
            done={running.done}
            total={running.total}
            detail={`${running.failed} failing · ${heard ? remaining(running.etaSec, (now - heard.at) / 1000, (now - heard.lastResultAt) / 1000) : remaining(running.etaSec, 0, 0)}`}
            onCancel={() => void run('Cancel the audit', () => backend().call('audit.cancel', { batchId: running.batchId }))}
          />
        </div>
      )}
      {s && s.audited === 0 && !running && <p className="muted">No audits yet: run “Audit all”, or open an environment and audit it.</p>}
      {s && s.audited === 0 && running && <p className="muted" data-testid="audit-first-results">Auditing: the chart appears with the first results.</p>}
      {s && s.audited > 0 && (
        <div className="audit-dash-body">
          <Bars s={s} onPick={(id) => void pick(id)} picked={picked} />
          {picked && (
            <section className="audit-picked">
              <h3>
                Failing <code>{picked}</code> ({failTotal.toLocaleString()}){' '}
                <button className="audit-link" data-testid="audit-show-in-library" onClick={() => useWorkbench.getState().showInLibrary({ audit: { checkId: picked, status: 'fail' } })}>
                  show in library
                </button>
              </h3>
              <ul>
                {envs.map((e) => (
                  <li key={e.id}>
                    <button className="audit-link" onClick={() => openAudit(e.id, e.name)}>
                      {e.name}
                    </button>
                    <button className="audit-link muted" onClick={() => useWorkbench.getState().openTab({ kind: 'environment', envId: e.id }, e.name)}>
                      library
                    </button>
                  </li>
                ))}
              </ul>
            </section>
          )}
        </div>
      )}
      <PoolSweeps onEnded={refresh} />
    </div>
  );
}
