import { useCallback, useEffect, useState } from 'react';
import type { OpenEnvStatus } from '../../../../core/api/calls/openenv';
import { backend } from '../../store/app';
import { useCall } from '../../store/useCall';
import { attempt } from '../../store/report';
import { SelectionMatches, SELECTION_PLACEHOLDER } from '../../components/SelectionMatches';
import { ErrorText } from '../../components/ErrorText';
import { openOpenEnvUrl } from './open';

const POLL_MS = 2000;

/**
 * The app's OpenEnv server (what `spade-workbench serve-env` is on the command line): start it over a
 * library selection, copy its URL for a trainer, watch its /ws sessions, stop it.
 */
export function OpenEnvView() {
  const [status, setStatus] = useState<OpenEnvStatus | null>(null);
  const [selection, setSelection] = useState('');
  const [port, setPort] = useState('8000');
  const [hint, setHint] = useState<'on' | 'off' | 'both'>('both');
  const [maxTurns, setMaxTurns] = useState('30');
  const [concurrency, setConcurrency] = useState('64');
  const [seeds, setSeeds] = useState('8');
  const { busy, error, run, setError } = useCall('openenv');

  const load = useCallback((quiet: boolean) => attempt('openenv', 'OpenEnv server', () => backend().call('openenv.status', {}), quiet ? { quiet: 'debug' } : {}).then((s) => s && setStatus(s)), []);
  useEffect(() => {
    void load(false);
    const t = setInterval(() => void load(true), POLL_MS);
    return () => clearInterval(t);
  }, [load]);

  const num = (v: string, name: string, lo: number, hi: number): number | null => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isInteger(n) || n < lo || n > hi) {
      setError(`${name} must be a whole number from ${lo} to ${hi}`);
      return null;
    }
    return n;
  };
  const start = async () => {
    const p = num(port, 'Port', 0, 65535);
    const m = num(maxTurns, 'Max turns', 1, 10_000);
    const c = num(concurrency, 'Sessions', 1, 4096);
    const s = num(seeds, 'Seeds', 1, 100_000);
    if (p === null || m === null || c === null || s === null) return;
    const r = await run('Starting the server', () => backend().call('openenv.start', { selection, port: p, hint, maxTurns: m, concurrency: c, seeds: s }));
    if (r) setStatus(r);
  };
  const stop = async () => {
    const r = await run('Stopping the server', () => backend().call('openenv.stop', {}));
    if (r) setStatus(r);
  };

  const live = status?.running === true;
  return (
    <div className="openenv-view" data-testid="openenv-view">
      <h2>OpenEnv server</h2>
      <p className="muted">
        Serves library environments over OpenEnv&apos;s protocol (HTTP and /ws sessions) on 127.0.0.1, so a trainer (TRL, Unsloth, torchforge, ART, verifiers) plays them in this workbench&apos;s sandbox. Every episode is recorded in the library.
      </p>
      {!live && (
        <div className="openenv-form">
          <label className="openenv-wide">
            Environments <input value={selection} onChange={(e) => setSelection(e.target.value)} placeholder={SELECTION_PLACEHOLDER} data-testid="openenv-selection" />
            <SelectionMatches query={selection} testId="openenv-matches" />
          </label>
          <label>
            Port <input value={port} onChange={(e) => setPort(e.target.value)} style={{ width: 70 }} data-testid="openenv-port" title="0: any free port" />
          </label>
          <label>
            Hint{' '}
            <select value={hint} onChange={(e) => setHint(e.target.value as 'on' | 'off' | 'both')} data-testid="openenv-hint">
              <option value="both">both</option>
              <option value="on">on</option>
              <option value="off">off</option>
            </select>
          </label>
          <label>
            Seeds <input value={seeds} onChange={(e) => setSeeds(e.target.value)} style={{ width: 60 }} />
          </label>
          <label>
            Max turns <input value={maxTurns} onChange={(e) => setMaxTurns(e.target.value)} style={{ width: 60 }} />
          </label>
          <label>
            Sessions <input value={concurrency} onChange={(e) => setConcurrency(e.target.value)} style={{ width: 60 }} title="Most /ws sessions at once" />
          </label>
          <button className="primary" disabled={busy !== null} onClick={() => void start()} data-testid="openenv-start">
            Start server
          </button>
        </div>
      )}
      {busy && <div className="muted">{busy}…</div>}
      <ErrorText error={error} />
      {live && status && (
        <div className="openenv-live" data-testid="openenv-live">
          <div className="openenv-url">
            Serving at <code data-testid="openenv-url">{status.url}</code>{' '}
            <button onClick={() => void navigator.clipboard?.writeText(status.url ?? '')}>Copy URL</button>{' '}
            <button onClick={() => openOpenEnvUrl(status.url ?? '')} data-testid="openenv-open-url" title="Open it as a client would: step it, replay, audit it over the wire">
              Open in the workbench
            </button>{' '}
            <button disabled={busy !== null} onClick={() => void stop()} data-testid="openenv-stop">
              Stop server
            </button>
          </div>
          <div className="muted">
            {status.environments} environment version{status.environments === 1 ? '' : 's'} {status.selection ? `of “${status.selection}”` : '(every environment)'}, {status.tasks} tasks (GET /tasks), hint {status.hint}, budget {status.maxTurns} turns, at most {status.concurrency} sessions
            {status.skipped.length ? `; ${status.skipped.length} tool-use left out` : ''}
          </div>
          <h3 data-testid="openenv-session-count">
            {status.sessions.length} session{status.sessions.length === 1 ? '' : 's'}
          </h3>
          {status.sessions.length > 0 && (
            <table className="runs-table" data-testid="openenv-sessions">
              <thead>
                <tr>
                  <th>session</th>
                  <th>client</th>
                  <th>since</th>
                  <th className="num">steps</th>
                  <th>task</th>
                </tr>
              </thead>
              <tbody>
                {status.sessions.map((s) => (
                  <tr key={s.id}>
                    <td>{s.id}</td>
                    <td>{s.remote}</td>
                    <td>{new Date(s.since).toLocaleTimeString()}</td>
                    <td className="num">{s.steps}</td>
                    <td>{s.task ?? '–'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
    </div>
  );
}
