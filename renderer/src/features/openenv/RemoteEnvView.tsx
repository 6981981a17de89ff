import { useEffect, useState } from 'react';
import type { RemoteEnvView } from '../../../../core/api/calls/openenv';
import type { ViewProps } from '../../views/registry';
import { backend } from '../../store/app';
import { useCall } from '../../store/useCall';
import { attempt } from '../../store/report';
import { ErrorText } from '../../components/ErrorText';
import { openEpisode } from '../episodes/store';
import { useOpening } from '../episodes/useOpening';
import { WorkProgress } from '../episodes/WorkProgress';
import { RemotePlayPanel } from './RemotePlayPanel';
import { WireAuditHistory } from './WireAuditHistory';
import { GamePicker, useServedGames } from './GamePicker';

type Turn = RemoteEnvView['turns'][number];

/** What the agent reads of an observation: its `text` (serve-env's), else its fields as JSON. */
function shown(obs: Turn['observation']): string {
  if (!obs) return '';
  if (typeof obs.text === 'string') return obs.text;
  return JSON.stringify(Object.fromEntries(Object.entries(obs).filter(([k]) => k !== 'metadata')), null, 1);
}

function hintNote(v: RemoteEnvView): string {
  const m = v.server.hintMode;
  if (m === null) return 'This server has no hint: only the workbench’s serve-env says it takes one, so it is played unhinted.';
  return `Hint: ${v.hint ? 'on' : 'off'} (the server serves ${m === 'both' ? 'both arms' : m === 'on' ? 'hinted episodes only' : 'unhinted episodes only'})`;
}

/**
 * An environment another OpenEnv server serves (its URL), in the workbench: open it, step it, reset,
 * replay the record on a fresh session, and audit the server over the wire (wire.* checks).
 */
export function RemoteEnvView({ tab }: ViewProps<'openenv-remote'>) {
  const [url, setUrl] = useState(tab.target.url);
  const [seed, setSeed] = useState('0');
  const [hint, setHint] = useState(false);
  const [text, setText] = useState('');
  const [view, setView] = useState<RemoteEnvView | null>(null);
  const [sel, setSel] = useState<number | null>(null);
  const served = useServedGames(url.trim());
  const { busy, error, run, setError } = useCall('openenv');
  const opening = useOpening();

  useEffect(() => {
    if (tab.target.url) setUrl(tab.target.url);
  }, [tab.target.url]);
  useEffect(() => {
    const id = view?.id;
    return () => {
      if (id) void attempt('openenv', 'Close the OpenEnv session', () => backend().call('openenv.remote.close', { id }), { quiet: 'debug' });
    };
  }, [view?.id]);

  const seedValue = (): number | null | undefined => {
    if (seed.trim() === '') return null;
    const n = Number(seed);
    if (!Number.isInteger(n) || n < 0) {
      setError('Seed must be a whole number from 0 (empty: no seed)');
      return undefined;
    }
    return n;
  };
  const took = (v: RemoteEnvView | undefined) => {
    if (!v) return;
    setView(v);
    setSel(v.turns.length - 1);
  };
  const open = async () => {
    const s = seedValue();
    if (s === undefined) return;
    if (view) await attempt('openenv', 'Close the OpenEnv session', () => backend().call('openenv.remote.close', { id: view.id }), { quiet: 'debug' });
    setView(null);
    took(await run('Opening the environment', () => backend().call('openenv.remote.open', { url: url.trim(), seed: s, hint })));
  };
  /** The environment as a recorded episode (runtime 'openenv'), in the episode view: step, scrub, replay. */
  const openAsEpisode = async () => {
    const s = seedValue();
    if (s === undefined) return;
    await run('Opening the environment as an episode', () =>
      opening.run('Opening the OpenEnv episode', async (requestId) => {
        const r = await backend().call('episodes.openRemote', { url: url.trim(), seed: s, hint, requestId: requestId(), ...(served.game ? { env: served.game } : {}) });
        openEpisode(r.episode);
      }),
    );
  };
  const step = async () => {
    if (!view) return;
    const v = await run('Stepping', () => backend().call('openenv.remote.step', { id: view.id, text }));
    if (v) setText('');
    took(v);
  };
  const reset = async () => {
    const s = seedValue();
    if (!view || s === undefined) return;
    took(await run('Resetting', () => backend().call('openenv.remote.reset', { id: view.id, seed: s })));
  };
  const replay = async () => view && took(await run('Replaying on a fresh session', () => backend().call('openenv.remote.replay', { id: view.id })));
  const audit = async () => view && took(await run('Auditing over the wire', () => backend().call('openenv.remote.audit', { id: view.id })));

  const turn = view && sel !== null ? view.turns[sel] : null;
  return (
    <div className="openenv-view remote-env" data-testid="remote-env-view">
      <h2>Environment at an OpenEnv URL</h2>
      <p className="muted">Any OpenEnv server: OpenEnv&apos;s own template, another tool&apos;s, or a serve-env. Its code runs where that server runs it; here it is only spoken to over HTTP and a /ws session.</p>
      <div className="openenv-form">
        <label className="openenv-wide">
          URL <input value={url} onChange={(e) => setUrl(e.target.value)} placeholder="http://127.0.0.1:8000" data-testid="remote-url" />
        </label>
        <label>
          Seed <input value={seed} onChange={(e) => setSeed(e.target.value)} style={{ width: 70 }} data-testid="remote-seed" title="Empty: no seed" />
        </label>
        <GamePicker {...served} />
        <label title="Only where the server takes a hint (the workbench's serve-env)">
          <input type="checkbox" checked={hint} onChange={(e) => setHint(e.target.checked)} data-testid="remote-hint" /> hint
        </label>
        <button className="primary" disabled={busy !== null || !url.trim()} onClick={() => void openAsEpisode()} data-testid="remote-open-episode" title="A recorded episode in the episode view: step, scrub, replay and compare; it stays in Episodes">
          Open in the episode view
        </button>
        <button disabled={busy !== null || !url.trim()} onClick={() => void open()} data-testid="remote-open" title="A session on this page, for a quick look and the wire audit; not recorded">
          Open here
        </button>
      </div>
      <WorkProgress work={opening.opening} onCancel={opening.cancel} testId="remote-opening" />
      {busy && <div className="muted">{busy}…</div>}
      <ErrorText error={error} />
      {view && (
        <div data-testid="remote-open-view">
          <div className="openenv-url">
            <strong data-testid="remote-name">{view.server.name ?? 'unnamed'}</strong> at <code>{view.url}</code> {view.server.version ? <span className="muted">v{view.server.version}</span> : null}
            <span className={view.live ? 'remote-live' : 'muted'}>{view.live ? 'session open' : 'no session'}</span>
          </div>
          <div className="muted" data-testid="remote-hint-note">
            {hintNote(view)} Action: {view.server.textField ? `the text in “${view.server.textField}”` : 'a JSON object (see the action schema)'}.
          </div>
          <div className="remote-main">
            <ol className="remote-turns" data-testid="remote-turns">
              {view.turns.map((t, i) => (
                <li key={i} className={`${i === sel ? 'sel' : ''} ${t.error ? 'err' : ''} ${view.replay?.divergence === t.idx ? 'diverged' : ''}`} onClick={() => setSel(i)} data-testid="remote-turn">
                  <span className="remote-idx">{t.text === null ? 'reset' : `#${t.idx}`}</span> <span className="remote-act">{t.text === null ? `seed ${view.seed ?? '–'}` : t.text}</span>
                  <span className="num">{t.error ? 'error' : `r ${t.reward ?? '–'}${t.done ? ' · done' : ''}`}</span>
                </li>
              ))}
            </ol>
            <div className="remote-detail" data-testid="remote-detail">
              {turn ? (
                <>
                  <div className="muted">{turn.text === null ? 'Reset' : `Turn ${turn.idx}: ${JSON.stringify(turn.action)}`}</div>
                  {turn.error ? <div className="error" data-testid="remote-turn-error">{turn.error}</div> : <pre data-testid="remote-observation">{shown(turn.observation)}</pre>}
                </>
              ) : null}
            </div>
          </div>
          <div className="openenv-form">
            <label className="openenv-wide">
              Action <textarea rows={2} value={text} onChange={(e) => setText(e.target.value)} placeholder={view.server.textField ? 'the agent’s text' : '{"field": value}'} data-testid="remote-action" />
            </label>
            <button className="primary" disabled={busy !== null || !view.live || view.done} onClick={() => void step()} data-testid="remote-step">
              Step
            </button>
            <button disabled={busy !== null} onClick={() => void reset()} data-testid="remote-reset" title="Reset with the seed above">
              Reset
            </button>
            <button disabled={busy !== null} onClick={() => void replay()} data-testid="remote-replay" title="Plays the record since the last reset again on a fresh session">
              Replay
            </button>
            <button disabled={busy !== null} onClick={() => void audit()} data-testid="remote-audit">
              Audit over the wire
            </button>
          </div>
          {view.replay && (
            <div className={view.replay.divergence === null ? 'muted' : 'error'} data-testid="remote-replay-result">
              {view.replay.message}
            </div>
          )}
          {view.audit && (
            <div data-testid="remote-audit-result">
              <h3>
                Wire audit: <span className={`verdict-${view.audit.verdict}`}>{view.audit.verdict}</span>
              </h3>
              <div className="muted">Checks over OpenEnv&apos;s protocol, from the outside; not SPADE&apos;s audit of the program.</div>
              <table className="runs-table">
                <tbody>
                  {view.audit.checks.map((c) => (
                    <tr key={c.id} data-testid={`wire-check-${c.id}`}>
                      <td className={`verdict-${c.status}`}>{c.status}</td>
                      <td>
                        <code>{c.id}</code>
                      </td>
                      <td>{c.message}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </div>
      )}
      <RemotePlayPanel url={url.trim()} hintMode={view?.server.hintMode} env={served.game} />
      <WireAuditHistory url={url.trim()} latest={view?.audit} />
    </div>
  );
}
