import { useCallback, useEffect, useRef, useState } from 'react';
import type { EnvDetail, EventPayload } from '../../../../core/api';
import { ProgressLine } from '../../components/ProgressLine';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';
import { useCall } from '../../store/useCall';
import type { ViewProps } from '../../views/registry';
import { envActions } from '../../views/envActions';
import { tabId, useWorkbench } from '../../store/workbench';
import { auditMarkers } from './markers';
import { canReplay, replayBeforeAfter, replayCheck, replayPlan } from './replay';
import { episodesAvailable } from './features';
import { loadAudit, runAudit, useAuditResults, type StoredAudit } from '../../store/auditResults';
import { loadEnvironment, useEnvironment } from '../../store/environments';

type Check = StoredAudit['checks'][number];

// `attribute`/`line` name a leaking field and the line that grows it, when the harness gives them.
// `part`/`returnedBy`/`changedBy` (aliasing) name a returned value and the later call that changed it;
// `seedOnly` (seed-ignored) the names that only hold the seed; `sharedWith` (reset-leak) the instance
// attribute that is the object a leaking module global holds.
const SHOWN = ['attribute', 'scope', 'sharedWith', 'part', 'returnedBy', 'changedBy', 'seedOnly', 'seed', 'actions', 'resetSeed', 'runtime', 'mode', 'expected', 'observed', 'line', 'call', 'attributes', 'step', 'answer', 'medianMs', 'maxMs'];

function Evidence({ c }: { c: Check }) {
  const ev = c.evidence;
  const keys = SHOWN.filter((k) => ev[k] !== undefined);
  const tb = typeof ev.traceback === 'string' ? ev.traceback : null;
  const replayable = episodesAvailable() && canReplay(c);
  return (
    <div className="audit-evidence">
      {(keys.length > 0 || replayable) && (
        <dl>
          {replayable && (
            <div className="audit-ev-row" data-ev="replays">
              <dt>replays</dt>
              <dd data-testid="audit-replay-plan">{replayPlan(c)}</dd>
            </div>
          )}
          {keys.map((k) => (
            <div key={k} className="audit-ev-row" data-ev={k}>
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

function shortVersion(env: EnvDetail, hash: string): string {
  const v = env.versions.find((x) => x.hash === hash);
  const m = v?.message ?? '';
  return `${hash.slice(0, 12)}${m ? ` “${m.length > 48 ? `${m.slice(0, 47)}…` : m}”` : ''}`;
}

/** The failing checks of the version before and of this one, side by side: the proof a fix worked. */
function BeforeAfter({ env, before, after, onRerun, busy }: { env: EnvDetail; before: StoredAudit; after: StoredAudit; onRerun(): void; busy: boolean }) {
  const replayBoth = (c: Check) =>
    void attempt('audit', 'Replay before/after', () => replayBeforeAfter(before.hash, after.hash, c, env.name));
  const ids = [...new Set([...before.checks, ...after.checks].filter((c) => c.status === 'fail' || c.status === 'warn').map((c) => c.id))];
  const find = (a: StoredAudit, id: string) => a.checks.find((c) => c.id === id);
  return (
    <section className="audit-ba" data-testid="audit-before-after">
      <h3>
        Before / after <span className="muted">· {shortVersion(env, before.hash)} → {shortVersion(env, after.hash)}</span>
        <button className="audit-link" onClick={onRerun} disabled={busy} data-testid="audit-rerun-both">
          {busy ? 're-running…' : 're-run both'}
        </button>
      </h3>
      {ids.length === 0 ? (
        <p className="muted">No failing or warning checks on either version.</p>
      ) : (
        <table className="audit-ba-table">
          <thead>
            <tr>
              <th>check</th>
              <th>before ({before.hash.slice(0, 8)})</th>
              <th>after ({after.hash.slice(0, 8)})</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {ids.map((id) => {
              const b = find(before, id);
              const a = find(after, id);
              return (
                <tr key={id} data-check={id}>
                  <td>
                    <code>{id}</code>
                  </td>
                  {[b, a].map((c, i) => (
                    <td key={i} className={`audit-ba-cell ${c?.status ?? 'none'}`} data-side={i ? 'after' : 'before'}>
                      <span className={`audit-dot ${c?.status ?? 'skip'}`} /> <strong>{c?.status ?? 'not run'}</strong> <span className="audit-msg">{c?.message ?? ''}</span>
                    </td>
                  ))}
                  <td>
                    {episodesAvailable() && b && canReplay(b) ? (
                      <button className="audit-link" data-testid="audit-replay-both" title="The failing evidence (same seed and actions) on both versions, side by side" onClick={() => void replayBoth(b)}>
                        replay both
                      </button>
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}

type RunProgress = EventPayload<'audit.runProgress'>;
interface LiveRun {
  runId: string;
  startedAt: number;
  /** Which version, when two run one after the other (before/after). */
  what: string;
  p: RunProgress | null;
  cancelling: boolean;
}

/**
 * One audit running here, seen as it goes: starting the sandbox, the check in progress, the time
 * spent against the audit's limit, and Cancel. `track(what, fn)` runs fn with a fresh run id.
 */
function useLiveAudit() {
  const [live, setLive] = useState<LiveRun | null>(null);
  const current = useRef<string | null>(null);
  useEffect(
    () =>
      backend().on('audit.runProgress', (p) => {
        if (p.runId === current.current) setLive((l) => (l && l.runId === p.runId ? { ...l, p } : l));
      }),
    [],
  );
  const track = async <T,>(what: string, fn: (runId: string) => Promise<T>): Promise<T> => {
    const runId = `ui-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    current.current = runId;
    setLive({ runId, startedAt: Date.now(), what, p: null, cancelling: false });
    try {
      return await fn(runId);
    } finally {
      if (current.current === runId) {
        current.current = null;
        setLive(null);
      }
    }
  };
  const cancel = () => {
    const id = current.current;
    if (!id) return;
    setLive((l) => (l ? { ...l, cancelling: true } : l));
    void attempt('audit', 'Cancel the audit', () => backend().call('audit.runCancel', { runId: id }));
  };
  return { live, track, cancel };
}

function LiveAudit({ live, onCancel }: { live: LiveRun; onCancel(): void }) {
  const p = live.p;
  const label = !p || p.state === 'starting' ? (p?.message ?? 'Starting the audit') : p.check ? `Checking ${p.check}` : 'Auditing';
  const detail = p && p.state === 'running' ? `check ${Math.min(p.checksDone + 1, p.checksTotal)} of ${p.checksTotal}` : undefined;
  return (
    <ProgressLine
      testId="audit-live"
      label={`${live.what ? `${live.what}: ` : ''}${label}`}
      startedAt={live.startedAt}
      limitSec={p?.limitSec ?? null}
      detail={detail}
      onCancel={onCancel}
      cancelling={live.cancelling}
    />
  );
}

/** The audit of an environment's head version: every check, its evidence, replay, source lines, and before/after. */
export function AuditView({ tab }: ViewProps<'audit'>) {
  const envId = tab.target.envId;
  // The store follows saves from the editor: a moved head moves this tab with it.
  const { env, error: loadError } = useEnvironment(envId);
  const [open, setOpen] = useState<Record<string, boolean>>({});
  const { busy, error, run } = useCall('audit');
  const { live, track, cancel } = useLiveAudit();
  const hash = env?.hash ?? null;
  const parent = env?.versions.find((v) => v.hash === hash)?.parentHash ?? null;
  const audit = useAuditResults((s) => (hash ? s.byHash[hash] : undefined));
  const before = useAuditResults((s) => (parent ? s.byHash[parent] : undefined));

  const loadEnv = useCallback(() => loadEnvironment(envId), [envId]);
  useEffect(() => {
    // The view says "not audited" until an answer comes; a miss is only logged.
    if (hash && audit === undefined) void attempt('audit', 'Stored audit', () => loadAudit(hash), { quiet: 'warn' });
    if (parent && before === undefined) void attempt('audit', 'Stored audit of the parent', () => loadAudit(parent), { quiet: 'warn' });
  }, [hash, parent, audit, before]);

  // "Audit again" audits what is the head NOW (asked afresh), never the hash this tab opened on.
  const auditHead = () =>
    run('Audit', async () => {
      const d = await loadEnv();
      await track('', (id) => runAudit(d.hash, id));
    });
  const rerunBoth = () =>
    run('Re-run before/after', async () => {
      const d = await loadEnv();
      const p = d.versions.find((v) => v.hash === d.hash)?.parentHash;
      if (p) await track('version before', (id) => runAudit(p, id));
      await track(p ? 'this version' : '', (id) => runAudit(d.hash, id));
    });

  if (!env) return error || loadError ? <p className="pad audit-error">{error ?? loadError}</p> : <p className="pad muted">Loading…</p>;
  const lines = env.source.split('\n');
  const markers = audit ? auditMarkers(audit.checks, lines.length) : [];
  const counts = { pass: 0, warn: 0, fail: 0, skip: 0 };
  for (const c of audit?.checks ?? []) counts[c.status]++;
  const running = busy === 'Audit' || busy === 'Re-run before/after';
  return (
    <div className="audit-view" data-testid="audit-view">
      <header className="audit-head">
        <h2>{env.name}</h2>
        <span className="audit-version" data-testid="audit-version" title={env.hash}>
          version {shortVersion(env, env.hash)} (head{env.versions.length > 1 ? ` of ${env.versions.length}` : ''})
        </span>
        {audit && <span className={`audit-badge ${audit.verdict}`}>{audit.verdict}</span>}
        {audit && <span className="muted">SPADE {audit.spadeAccepts ? 'accepts' : 'rejects'} · {counts.fail} fail · {counts.warn} warn · {counts.pass} pass · {counts.skip} skip</span>}
        {audit?.runtime && (
          <span className="muted" data-testid="audit-runtime">
            · ran in {audit.runtime === 'pyodide' ? 'the Pyodide sandbox' : 'native CPython (less isolated)'}
          </span>
        )}
        {envActions()
          .filter((a) => a.id === 'edit')
          .map((a) => (
            <button key={a.id} className="audit-edit" data-testid="audit-edit" onClick={() => a.run({ id: env.id, name: env.name, hash: env.hash })}>
              Edit
            </button>
          ))}
        <button className="audit-run" onClick={() => void auditHead()} disabled={running}>
          {running ? 'Auditing…' : audit ? 'Audit again' : 'Run audit'}
        </button>
      </header>
      {live && <LiveAudit live={live} onCancel={cancel} />}
      {error && <p className="audit-error">{error}</p>}
      {!audit && !running && <p className="muted">This version is not audited yet.</p>}
      {audit && before && parent && <BeforeAfter env={env} before={before} after={audit} onRerun={() => void rerunBoth()} busy={running} />}
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
                        void attempt('audit', 'Replay', () => replayCheck(audit.hash, c, env.name));
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
                <div
                  key={i}
                  className={`audit-line ${m.severity === 8 ? 'fail' : 'warn'}`}
                  title="Open this line in the editor"
                  onClick={() => {
                    const edit = envActions().find((a) => a.id === 'edit');
                    if (!edit) return;
                    edit.run({ id: env.id, name: env.name, hash: env.hash });
                    // The editor tab of this environment (one id per target).
                    useWorkbench.getState().revealLine(tabId({ kind: 'editor', envId: env.id }), m.startLineNumber);
                  }}
                >
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
