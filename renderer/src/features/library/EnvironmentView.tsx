import { useEffect, useState } from 'react';
import type { CallOutput, EnvDetail } from '../../../../core/api';
import { openRuns } from '../runs/open';
import { CodeEditor } from '../../monaco/CodeEditor';
import { backend } from '../../store/app';
import type { ViewProps } from '../../views/registry';
import { fmt } from './store';
import { MadeBy } from './MadeBy';
import { MadeByRound } from '../design/MadeByRound';
import { envActions } from '../../views/envActions';
import { loadAudit, useAuditResults } from '../../store/auditResults';
import { environments, useEnvironment } from '../../store/environments';
import { attempt } from '../../store/report';
import { Visible } from '../../components/Visible';
import { useWorkbench } from '../../store/workbench';

function Stat({ label, value }: { label: string; value: string }) {
  return (
    <div className="env-stat">
      <div className="muted">{label}</div>
      <div className="env-stat-value">{value}</div>
    </div>
  );
}

/**
 * What model runs measured for this environment: per model and per version (newest first), with
 * the seeds the numbers came from and the episodes that failed. Kept apart from what a training run
 * recorded. A number a run could not measure (too many failed episodes) shows as "not measured".
 */
function MeasuredTable({ env }: { env: EnvDetail }) {
  const [rows, setRows] = useState<CallOutput<'runs.measured'> | null>(null);
  const hashes = env.versions.map((v) => v.hash).join(',');
  useEffect(() => {
    let live = true;
    const load = () =>
      // Refetched on every run change: a miss is logged (as before), the section keeps what it showed.
      void attempt('library', 'measurements', () => backend().call('runs.measured', { hashes: hashes.split(',').slice(-1000) }), { quiet: 'error' }).then((r) => r && live && setRows(r));
    load();
    const off = backend().on('runs.changed', load);
    return () => {
      live = false;
      off();
    };
  }, [hashes]);
  if (!rows) return <p className="muted">Loading…</p>;
  if (!rows.length) return <p className="muted" data-testid="env-measured-none">No model has played this environment yet (Episodes → play with a model).</p>;
  const version = (h: string) => (h === env.hash ? 'head' : `v${env.versions.findIndex((v) => v.hash === h) + 1}`);
  return (
    <div className="env-measured-wrap">
    <table className="ep-regret-table env-measured" data-testid="env-measured">
      <thead>
        <tr>
          <th>model</th>
          <th>version</th>
          <th>regret</th>
          <th>r_hint</th>
          <th>r_no_hint</th>
          <th>win rate</th>
          <th>difficulty</th>
          <th>seeds</th>
          <th>run</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((m) => (
          <tr key={`${m.runId}:${m.envHash}`} data-testid="env-measured-row">
            <td>{m.model}</td>
            <td title={m.envHash}>{version(m.envHash)}</td>
            <td data-testid="env-measured-regret">
              <b>{m.regret === null ? 'not measured' : fmt(m.regret)}</b>
            </td>
            <td>{fmt(m.rHint)}</td>
            <td>{fmt(m.rNoHint)}</td>
            <td data-testid="env-measured-winrate" className={m.frontier ? 'lib-frontier' : ''} title={m.frontier ? "in SPADE's frontier band (0.15-0.85)" : undefined}>
              {m.winRate === null ? 'not measured' : fmt(m.winRate)}
            </td>
            <td>{fmt(m.difficulty)}</td>
            <td title={m.seeds.join(', ')}>
              {m.seeds.length ? `${m.seeds.length} (${m.seeds[0]}–${m.seeds.at(-1)})` : '0'}
              {m.failed ? <span className="lib-error"> · {m.failed} failed</span> : null}
            </td>
            <td>
              <button className="ep-link" onClick={() => openRuns(m.runId)}>
                {m.runId}
              </button>
              {m.runStatus && m.runStatus !== 'done' ? <span className="muted"> ({m.runStatus})</span> : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
    </div>
  );
}

/** One environment: read-only source, hashes and lineage, SPADE stats, hint, tags and notes. */
export function EnvironmentView({ tab }: ViewProps<'environment'>) {
  const id = tab.target.envId;
  const { env, error } = useEnvironment(id);
  const [notes, setNotes] = useState('');
  const [newTag, setNewTag] = useState('');
  const [shown, setShown] = useState<{ hash: string; source: string } | null>(null);
  // The notes box follows the stored notes (saved here or anywhere else) until it is typed in again.
  const storedNotes = env?.notes;
  useEffect(() => setNotes(storedNotes ?? ''), [storedNotes]);

  if (!env) return error ? <p className="pad lib-error">{error}</p> : <p className="pad muted">Loading…</p>;
  return <EnvironmentDetail env={env} id={id} notes={notes} setNotes={setNotes} newTag={newTag} setNewTag={setNewTag} shown={shown} setShown={setShown} />;
}

/** The stored audit of the head version, as a verdict with its failing checks. */
function AuditVerdict({ hash, envId, name }: { hash: string; envId: number; name: string }) {
  const audit = useAuditResults((s) => s.byHash[hash]);
  useEffect(() => {
    if (audit === undefined) void attempt('library', 'Stored audit', () => loadAudit(hash), { quiet: 'warn' });
  }, [hash, audit]);
  if (audit === undefined) return <span className="muted">…</span>;
  if (audit === null) return <span className="muted" data-testid="env-verdict">not audited</span>;
  const failing = audit.checks.filter((c) => c.status === 'fail').map((c) => c.id);
  return (
    <span data-testid="env-verdict">
      <button
        className={`audit-badge ${audit.verdict}`}
        title="Open the audit: every check with its evidence"
        data-testid="env-verdict-open"
        onClick={() => useWorkbench.getState().openTab({ kind: 'audit', envId }, `Audit: ${name}`)}
      >
        {audit.verdict}
      </button>{' '}
      {failing.length ? <span className="muted">fails {failing.join(', ')}</span> : null}
    </span>
  );
}

interface DetailProps {
  env: EnvDetail;
  id: number;
  notes: string;
  setNotes(n: string): void;
  newTag: string;
  setNewTag(t: string): void;
  shown: { hash: string; source: string } | null;
  setShown(s: { hash: string; source: string } | null): void;
}

function EnvironmentDetail({ env, id, notes, setNotes, newTag, setNewTag, shown, setShown }: DetailProps) {
  const source = shown && shown.hash !== env.hash ? shown.source : env.source;
  const viewing = shown && shown.hash !== env.hash ? shown.hash : env.hash;
  return (
    <div className="env-view" data-testid="environment-view">
      <div className="env-side">
        <header className="env-head">
          <h2 data-testid="env-name"><Visible text={env.name} /></h2>
          <div className="muted">
            {env.kind} · {env.skill ?? 'no skill'} {env.rolloutStep !== null ? `· step ${env.rolloutStep}` : ''}
          </div>
          <div className="row env-actions">
            {envActions().map((a) => (
              <button key={a.id} data-testid={`env-action-${a.id}`} onClick={() => a.run({ id, name: env.name, hash: env.hash })}>
                {a.label}
              </button>
            ))}
            <button onClick={() => void environments.setSeed([id], !env.seed)} data-testid="env-seed">
              {env.seed ? '★ Seed' : '☆ Make seed'}
            </button>
            <label className="muted">
              rating{' '}
              <select value={env.rating ?? ''} onChange={(e) => void environments.update(id, { rating: e.target.value === '' ? null : Number(e.target.value) }, 'Rate')}>
                <option value="">–</option>
                {[0, 1, 2, 3, 4, 5].map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
            </label>
          </div>
        </header>
        {env.rejected ? (
          <section className="env-rejected">
            <b>Rejected</b> at {env.rejectionStage ?? 'an unknown stage'}
            {env.rejectionReason ? <pre className="mono">{env.rejectionReason}</pre> : null}
          </section>
        ) : null}
        {env.flags.length ? <section className="env-flags">⚠ {env.flags.join(', ')}</section> : null}
        <section>
          <h3>Measured by models</h3>
          <MeasuredTable env={env} />
        </section>
        <section>
          <h3>Recorded by training</h3>
          <p className="muted">{env.sourceRun ? `Imported from run ${env.sourceRun}${env.rolloutStep !== null ? `, rollout ${env.rolloutStep}` : ''} (env_memory.json, step cache).` : 'Numbers imported with the environment (env_memory.json, step cache), if any.'}</p>
          <div className="env-stats" data-testid="env-recorded">
            <Stat label="win rate" value={fmt(env.winRate)} />
            <Stat label="regret" value={fmt(env.regret)} />
            <Stat label="r_hint" value={fmt(env.rHint)} />
            <Stat label="r_no_hint" value={fmt(env.rNoHint)} />
            <Stat label="validation" value={env.validation ?? '–'} />
          </div>
        </section>
        <section>
          <h3>Audit (head version)</h3>
          <AuditVerdict hash={env.hash} envId={id} name={env.name} />
        </section>
        <section>
          <h3>Hint</h3>
          {env.hint ? <p className="env-hint" data-testid="env-hint">
              {/* One child: .env-hint is also the editor's flex column, which would put each token on a line of its own. */}
              <span>
                <Visible text={env.hint} />
              </span>
            </p> : <p className="muted">No hint.</p>}
          {env.hints.length > 1 ? <div className="muted">{env.hints.length} hint versions</div> : null}
        </section>
        <section>
          <h3>Tags</h3>
          <div className="lib-chips">
            {env.tags.map((t) => (
              <span key={t} className="chip on">
                {t}{' '}
                <button className="link" aria-label={`Remove tag ${t}`} onClick={() => void environments.tag([id], { remove: [t] })}>
                  ×
                </button>
              </span>
            ))}
            <form
              onSubmit={(e) => {
                e.preventDefault();
                const t = newTag.trim();
                if (!/^[^\s,]{1,64}$/.test(t)) return;
                setNewTag('');
                void environments.tag([id], { add: [t] });
              }}
            >
              <input value={newTag} onChange={(e) => setNewTag(e.target.value)} placeholder="add tag" aria-label="Add tag" size={10} />
            </form>
          </div>
        </section>
        <section>
          <h3>Notes</h3>
          <textarea
            className="env-notes"
            value={notes}
            onChange={(e) => setNotes(e.target.value)}
            onBlur={() => notes !== env.notes && void environments.update(id, { notes }, 'Save notes')}
            rows={4}
            aria-label="Notes"
          />
        </section>
        <section>
          <h3>Lineage</h3>
          <MadeBy env={env} />
          <MadeByRound env={env} />
          <ol className="env-lineage" data-testid="env-lineage">
            {env.versions.map((v) => (
              <li key={v.hash} className={v.hash === viewing ? 'current' : ''}>
                <button
                  className="link mono"
                  title={v.hash}
                  onClick={() =>
                    v.hash === env.hash ? setShown(null) : void attempt('library', 'Show version', () => backend().call('memory.version', { hash: v.hash })).then((r) => r && setShown({ hash: r.hash, source: r.source }))
                  }
                >
                  {v.hash.slice(0, 12)}
                </button>{' '}
                {v.hash === env.hash ? <b>head</b> : null} <span className="muted">{v.message || '(no message)'}</span>
                {v.parentHash ? <div className="muted mono">parent {v.parentHash.slice(0, 12)}</div> : null}
              </li>
            ))}
          </ol>
          <div className="muted mono env-hash" title="SHA-256 of the source">
            sha256 {env.hash}
          </div>
        </section>
        <section>
          <h3>Seen in</h3>
          <ul className="env-sightings">
            {env.sightings.map((s) => (
              <li key={s.path} className="mono" title={s.path}>
                {s.path}
                {s.run ? <span className="muted"> · run {s.run}</span> : null}
              </li>
            ))}
          </ul>
        </section>
      </div>
      <div className="env-source">
        <div className="env-source-bar muted">
          {viewing === env.hash ? 'Head version (read-only)' : `Older version ${viewing.slice(0, 12)} (read-only)`}
        </div>
        <div className="env-source-body">
          <CodeEditor value={source} readOnly ariaLabel={`Source of ${env.name}`} />
        </div>
      </div>
    </div>
  );
}
