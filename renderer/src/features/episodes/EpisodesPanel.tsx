import { useEffect, useState } from 'react';
import type { CallOutput, EnvSummary } from '../../../../core/api';
import { backend, useApp } from '../../store/app';
import { attempt, orWhen } from '../../store/report';
import { useCall } from '../../store/useCall';
import { EpisodeFiltersBar } from './EpisodeFilters';
import { ProgressLine } from '../../components/ProgressLine';
import { useOpening } from './useOpening';
import { episodeTitle, returnNote, openEpisode, openLlm, openPair, openRegret, subscribeEpisodes, useEpisodes } from './store';
import { Visible } from '../../components/Visible';
import { openOpenEnvUrl } from '../openenv/open';
import { visibleText } from '../../components/visibleText';

/** The Import section's wait, shown under its button rather than under Play. */
const IMPORTING = 'Importing and replaying';

function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/x-ndjson' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** The Episodes side panel: start an episode, compare hints, run regret, import, and the recordings. */
export function EpisodesPanel() {
  const rows = useEpisodes((s) => s.rows);
  const total = useEpisodes((s) => s.total);
  const loaded = useEpisodes((s) => s.loaded);
  const filters = useEpisodes((s) => s.filters);
  const more = useEpisodes((s) => s.more);
  const [query, setQuery] = useState('');
  const [envs, setEnvs] = useState<EnvSummary[]>([]);
  const [hash, setHash] = useState('');
  const [seed, setSeed] = useState(0);
  const [hint, setHint] = useState(false);
  const [budget, setBudget] = useState<number | ''>('');
  // The budget an episode gets when the box is empty: the engine's (Settings), never a number of its own.
  const defaultBudget = useApp((s) => s.settings?.maxTurns ?? null);
  // The panel's one line (ep-msg) says what the last action did, or why it failed.
  const { busy: busyLabel, error, setError, run } = useCall('episodes');
  const busy = busyLabel !== null;
  const [note, setNote] = useState<string | null>(null);
  const msg = error ?? note;
  const [trajText, setTrajText] = useState('');
  const [trajName, setTrajName] = useState<string | undefined>(undefined);
  const { opening, run: runOpen, cancel: cancelOpen } = useOpening();
  useEffect(() => subscribeEpisodes(), []);
  useEffect(() => {
    let alive = true;
    const t = setTimeout(async () => {
      const r = await attempt('episodes', 'Search environments', () => backend().call('memory.search', { query, limit: 200 }), { show: setError, current: () => alive });
      if (!r || !alive) return;
      setEnvs(r.rows);
      if (!hash || !r.rows.some((e) => e.hash === hash)) setHash(r.rows[0]?.hash ?? '');
    }, 150);
    return () => {
      alive = false;
      clearTimeout(t);
    };
  }, [query]);
  const env = envs.find((e) => e.hash === hash);
  const opts = () => ({ hash, seed, ...(budget !== '' ? { maxTurns: budget } : {}) });
  const guard = (label: string, fn: () => Promise<void>) => {
    setNote(null);
    return run(label, fn);
  };
  return (
    <div className="ep-panel" data-testid="episodes-panel">
      <section>
        <div className="ep-panel-title">New episode</div>
        <input placeholder="Search environments…" value={query} onChange={(e) => setQuery(e.target.value)} data-testid="ep-env-search" />
        <select value={hash} onChange={(e) => setHash(e.target.value)} data-testid="ep-env" aria-label="Environment">
          {envs.map((e) => (
            <option key={e.hash} value={e.hash}>
              {visibleText(e.name)} · {e.skill ?? e.kind} · {e.hash.slice(0, 8)}
            </option>
          ))}
        </select>
        <div className="ep-row">
          <label>
            seed <input type="number" min={0} value={seed} onChange={(e) => setSeed(Number(e.target.value))} data-testid="ep-seed" />
          </label>
          <label>
            budget{' '}
            <input
              type="number"
              min={1}
              placeholder={defaultBudget !== null ? String(defaultBudget) : ''}
              title={`Agent turns; empty: the default from Settings${defaultBudget !== null ? ` (${defaultBudget})` : ''}`}
              value={budget}
              onChange={(e) => setBudget(e.target.value === '' ? '' : Number(e.target.value))}
              data-testid="ep-budget"
            />
          </label>
          <label title="SPADE's hinted play: the first observation gets the environment's hint">
            <input type="checkbox" checked={hint} onChange={(e) => setHint(e.target.checked)} data-testid="ep-hint" /> hint
          </label>
        </div>
        <div className="ep-row">
          <button
            className="primary"
            disabled={busy || !hash}
            data-testid="ep-open"
            onClick={() =>
              guard('Play', async () => {
                const done = await runOpen('Opening the episode', async (requestId) => {
                  const r = await backend().call('episodes.open', { ...opts(), hint, requestId: requestId() });
                  openEpisode(r.episode);
                });
                if (done === 'cancelled') setNote('Cancelled: no episode was opened.');
              })
            }
          >
            Play
          </button>
          <button
            disabled={busy || !hash}
            data-testid="ep-compare-hint"
            title="The same seed without and with the hint, in two synchronized columns"
            onClick={() =>
              guard('With / without hint', async () => {
                const first: { id: number | null } = { id: null };
                const done = await runOpen('Opening the two episodes', async (requestId) => {
                  const a = (await backend().call('episodes.open', { ...opts(), hint: false, label: 'compare: no hint', requestId: requestId() })).episode.id;
                  first.id = a;
                  const b = await backend().call('episodes.open', { ...opts(), hint: true, label: 'compare: hint', requestId: requestId() });
                  openPair(a, b.episode.id, 'hint', `Hint? ${env?.name ?? ''} s${seed}`);
                });
                // The first one opened before Cancel: its session is closed too (its recording stays).
                if (done === 'cancelled') {
                  const id = first.id;
                  if (id !== null) await attempt('episodes', 'Close the first episode', () => backend().call('episodes.close', { id }), { quiet: 'warn' });
                  setNote('Cancelled: no episode was opened.');
                }
              })
            }
          >
            With / without hint
          </button>
          <button disabled={!hash} data-testid="ep-regret" onClick={() => env && openRegret(env.hash, env.name)}>
            Regret…
          </button>
          <button disabled={!hash} data-testid="ep-llm" onClick={() => env && openLlm(env.hash, env.name)}>
            Model…
          </button>
          <button data-testid="ep-openenv-url" title="An environment another OpenEnv server serves, by its URL" onClick={() => openOpenEnvUrl()}>
            OpenEnv URL…
          </button>
        </div>
        {opening && opening.label !== IMPORTING ? <ProgressLine label={opening.label} startedAt={opening.startedAt} detail={opening.detail} onCancel={cancelOpen} cancelling={opening.cancelling} testId="ep-opening" /> : null}
      </section>
      <section>
        <div className="ep-panel-title">Import</div>
        <input
          type="file"
          accept=".json,.jsonl"
          data-testid="ep-import-file"
          onChange={async (e) => {
            const f = e.target.files?.[0];
            if (!f) return;
            setTrajText(await f.text());
            setTrajName(f.name);
          }}
        />
        <textarea rows={3} placeholder="…or paste messages JSON / JSONL, or exported episodes" value={trajText} onChange={(e) => setTrajText(e.target.value)} data-testid="ep-import-text" />
        <div className="ep-row">
          <button
            disabled={busy || !trajText.trim()}
            data-testid="ep-import-run"
            onClick={() =>
              guard('Import & replay', async () => {
                const isEpisodes = trajText.trimStart().startsWith('{"format":"spade-workbench.episode"');
                if (isEpisodes) {
                  const r = await backend().call('episodes.importJsonl', { text: trajText });
                  setNote(`Imported ${r.ids.length} episode(s)${r.skipped.length ? `; skipped ${r.skipped.map((s) => `line ${s.line}: ${s.reason}`).join('; ')}` : ''}`);
                  return;
                }
                const base = { text: trajText, ...(trajName ? { fileName: trajName } : {}) };
                const got: { r: CallOutput<'episodes.importTrajectory'> | null } = { r: null };
                // The seed search and the replay take seconds: progress and Cancel, as an open has.
                const done = await runOpen(IMPORTING, async (requestId) => {
                  // The trajectory's own env_hash / game file name first; the selected environment when
                  // the file names no game in the library (a second ask, not an error to show).
                  const bound = trajName || !hash ? base : { ...base, envHash: hash };
                  const first = () => backend().call('episodes.importTrajectory', { ...bound, requestId: requestId() });
                  got.r = hash && trajName ? await orWhen('not_found', first, () => backend().call('episodes.importTrajectory', { ...base, envHash: hash, requestId: requestId() })) : await first();
                });
                const r = got.r;
                if (done === 'cancelled' || !r) return setNote('Cancelled: nothing was imported.');
                const first = r.results[0];
                setNote(
                  r.results
                    .map((x) => `#${x.episodeId} ${x.envName ?? ''}: seed ${x.seed ?? '?'} (${x.seedFrom}), ${x.report.divergence ? `diverges at step ${x.report.divergence.idx}` : 'no divergence'}`)
                    .join('\n'),
                );
                if (first) {
                  const got = await backend().call('episodes.get', { id: first.episodeId });
                  openEpisode(got.episode);
                }
              })
            }
          >
            Import &amp; replay
          </button>
          <span className="muted">{trajName ? `${trajName}: bound by its env_hash or file name, else to the selected environment` : hash ? 'pasted text binds to the selected environment' : ''}</span>
        </div>
        {opening && opening.label === IMPORTING ? <ProgressLine label={opening.label} startedAt={opening.startedAt} detail={opening.detail} onCancel={cancelOpen} cancelling={opening.cancelling} testId="ep-importing" /> : null}
      </section>
      {msg ? (
        <pre className="ep-msg" data-testid="ep-msg">
          {msg}
        </pre>
      ) : null}
      <section className="ep-recorded">
        <div className="ep-panel-title">
          Recorded{' '}
          <span className="muted" data-testid="ep-count">
            ({rows.length < total ? `${rows.length} of ${total}` : total})
          </span>
          <button
            className="ep-link"
            disabled={rows.length === 0}
            onClick={() =>
              guard('Export', async () => {
                const r = await backend().call('episodes.exportJsonl', { ids: rows.slice(0, 100).map((e) => e.id) });
                download('episodes.jsonl', r.text);
              })
            }
          >
            export
          </button>
        </div>
        <EpisodeFiltersBar />
        {loaded && rows.length === 0 ? (
          <p className="muted" data-testid="ep-empty">
            {Object.keys(filters).length ? 'No recorded episode matches these filters.' : 'No episodes recorded yet.'}
          </p>
        ) : null}
        <ul className="ep-list" data-testid="ep-list">
          {rows.map((e) => (
            <li key={e.id} onClick={() => openEpisode(e)} data-testid="ep-item" data-id={e.id} title={e.label}>
              <span className="ep-name">
                <Visible text={episodeTitle(e)} />
              </span>
              <span className="muted">
                {e.origin} · {typeof e.policy.kind === 'string' ? `${e.policy.kind} · ` : ''}
                {e.stepCount} steps · return <span data-testid="ep-item-return">{e.totalReturn}</span>
                {returnNote(e) ? (
                  <span className="ep-return-note" data-testid="ep-item-return-note" title="Each reset starts a new return; the episode's return is the last one's (as SPADE scores one reset's play)">
                    {' '}
                    ({returnNote(e)})
                  </span>
                ) : null}{' '}
                · {e.createdAt.slice(0, 10)}
                {e.divergenceStep !== null ? ` · diverges @${e.divergenceStep}` : ''}
                {e.live ? ' · live' : ''}
              </span>
            </li>
          ))}
        </ul>
        {rows.length < total ? (
          <button className="ep-more" data-testid="ep-more" onClick={() => void more()}>
            Show {Math.min(200, total - rows.length)} more of {total - rows.length}
          </button>
        ) : null}
      </section>
    </div>
  );
}
