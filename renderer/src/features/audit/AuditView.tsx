import { useCallback, useEffect, useState } from 'react';
import type { CallOutput, EnvDetail } from '../../../../core/api';
import { backend, log } from '../../store/app';
import type { ViewProps } from '../../views/registry';
import { auditMarkers } from './markers';
import { canReplay, replayCheck } from './replay';
import { episodesAvailable } from './features';

type Stored = NonNullable<CallOutput<'audit.results'>>;
type Check = Stored['checks'][number];

const SHOWN = ['seed', 'actions', 'expected', 'observed', 'line', 'call', 'attributes', 'step', 'answer', 'medianMs', 'maxMs'];

function Evidence({ c }: { c: Check }) {
  const ev = c.evidence;
  const keys = SHOWN.filter((k) => ev[k] !== undefined);
  const tb = typeof ev.traceback === 'string' ? ev.traceback : null;
  return (
    <div className="audit-evidence">
      {keys.length > 0 && (
        <dl>
          {keys.map((k) => (
            <div key={k} className="audit-ev-row">
              <dt>{k}</dt>
              <dd>
                <code>{typeof ev[k] === 'string' ? (ev[k] as string) : JSON.stringify(ev[k])}</code>
              </dd>
            </div>
          ))}
        </dl>
      )}
      {tb && <pre className="audit-tb">{tb}</pre>}
    </div>
  );
}

/** The audit of one environment version: every check, its evidence, replay and source lines. */
export function AuditView({ tab }: ViewProps) {
  const envId = Number(tab.params.id);
  const [env, setEnv] = useState<EnvDetail | null>(null);
  const [audit, setAudit] = useState<Stored | null>(null);
  const [running, setRunning] = useState(false);
  const [open, setOpen] = useState<Record<string, boolean>>({});
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      const d = await backend().call('memory.get', { id: envId });
      setEnv(d);
      setAudit(await backend().call('audit.results', { hash: d.hash }));
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  }, [envId]);
  useEffect(() => void load(), [load]);

  const run = async () => {
    if (!env) return;
    setRunning(true);
    try {
      setAudit(await backend().call('audit.run', { hash: env.hash }));
      setError(null);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setRunning(false);
    }
  };

  if (error) return <p className="pad audit-error">{error}</p>;
  if (!env) return <p className="pad muted">Loading…</p>;
  const lines = env.source.split('\n');
  const markers = audit ? auditMarkers(audit.checks, lines.length) : [];
  const counts = { pass: 0, warn: 0, fail: 0, skip: 0 };
  for (const c of audit?.checks ?? []) counts[c.status]++;
  return (
    <div className="audit-view" data-testid="audit-view">
      <header className="audit-head">
        <h2>{env.name}</h2>
        {audit && <span className={`audit-badge ${audit.verdict}`}>{audit.verdict}</span>}
        {audit && <span className="muted">SPADE {audit.spadeAccepts ? 'accepts' : 'rejects'} · {counts.fail} fail · {counts.warn} warn · {counts.pass} pass · {counts.skip} skip</span>}
        {audit?.runtime && (
          <span className="muted" data-testid="audit-runtime">
            · ran in {audit.runtime === 'pyodide' ? 'the Pyodide sandbox' : 'native CPython (less isolated)'}
          </span>
        )}
        <button className="audit-run" onClick={() => void run()} disabled={running}>
          {running ? 'Auditing…' : audit ? 'Audit again' : 'Run audit'}
        </button>
      </header>
      {!audit && !running && <p className="muted">Not audited yet.</p>}
      {audit && (
        <div className="audit-body">
          <ul className="audit-checks">
            {audit.checks.map((c) => (
              <li key={c.id} className={`audit-check ${c.status}`} data-check={c.id}>
                <div className="audit-check-row" onClick={() => setOpen((o) => ({ ...o, [c.id]: !o[c.id] }))}>
                  <span className={`audit-dot ${c.status}`} aria-label={c.status} />
                  <code className="audit-id">{c.id}</code>
                  <span className="audit-msg">{c.message}</span>
                  {episodesAvailable() && canReplay(c) && (
                    <button
                      className="audit-replay"
                      onClick={(e) => {
                        e.stopPropagation();
                        replayCheck(audit.hash, c, env.name).catch((err: unknown) => log('error', 'audit', `replay: ${err instanceof Error ? err.message : String(err)}`));
                      }}
                    >
                      Replay
                    </button>
                  )}
                </div>
                {(open[c.id] || (c.status === 'fail' && Object.keys(c.evidence).length > 0 && open[c.id] !== false)) && <Evidence c={c} />}
              </li>
            ))}
          </ul>
          {markers.length > 0 && (
            <section className="audit-lines">
              <h3>Offending lines</h3>
              {markers.map((m, i) => (
                <div key={i} className={`audit-line ${m.severity === 8 ? 'fail' : 'warn'}`}>
                  <span className="audit-lno">{m.startLineNumber}</span>
                  <code>{lines[m.startLineNumber - 1]?.trim()}</code>
                  <span className="muted">{m.code}</span>
                </div>
              ))}
            </section>
          )}
        </div>
      )}
    </div>
  );
}
