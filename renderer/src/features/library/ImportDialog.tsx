import { useEffect, useState } from 'react';
import type { ImportProgress } from '../../../../core/api';
import { backend, useApp } from '../../store/app';
import { attempt } from '../../store/report';
import { Dialog } from '../../components/Dialog';
import { useCall } from '../../store/useCall';

/** Paths typed or pasted (one per line): the web host reads the machine it runs on, so no browser file picker. */
export function ImportDialog({ onClose }: { onClose(): void }) {
  const [paths, setPaths] = useState('');
  // The desktop app can offer its native picker; a browser's picker would name files on the
  // wrong machine (the web host reads the machine it runs on), so web mode keeps the path field.
  const desktop = useApp((s) => s.info?.picker === true);
  const { error, run } = useCall('library');
  const browse = async (folders: boolean) => {
    const r = await run('Pick paths', () => backend().call('app.pickPaths', { title: 'Import into the library', folders }));
    if (r?.paths.length) setPaths((p) => [p.trim(), ...r.paths].filter(Boolean).join('\n'));
  };
  const [followLinks, setFollowLinks] = useState(false);
  const [jobId, setJobId] = useState<string | null>(null);
  const [progress, setProgress] = useState<ImportProgress | null>(null);

  useEffect(() => {
    if (!jobId) return;
    let finished = false;
    const off = backend().on('memory.importProgress', (p) => {
      if (p.jobId !== jobId) return;
      finished ||= p.phase === 'done' || p.phase === 'failed';
      setProgress(p);
    });
    // A small import can finish before this subscription exists; catch up from its last state.
    void attempt('library', 'Import status', () => backend().call('memory.importStatus', { jobId }), { quiet: 'debug' }).then((p) => {
      if (p && !finished) setProgress(p);
    });
    return off;
  }, [jobId]);

  const start = async () => {
    setProgress(null);
    const list = paths
      .split('\n')
      .map((p) => p.trim())
      .filter(Boolean);
    const r = await run('Import', () => backend().call('memory.import', { paths: list, jobId: `ui-${Date.now().toString(36)}`, ...(followLinks ? { followLinks } : {}) }));
    if (r) setJobId(r.jobId);
  };
  const running = !!jobId && progress?.phase !== 'done' && progress?.phase !== 'failed';
  const summary = progress?.summary;
  const processed = progress ? progress.imported + progress.unchanged + progress.updated + progress.skipped : 0;
  return (
    <Dialog title="Import environments" onClose={onClose} closable={!running} className="lib-import" testId="import-dialog">
        <h2>Import environments</h2>
        <p className="muted">
          Files or folders on the machine running the workbench, one per line: SPADE game folders and rollout caches, rejected games, a static pool
          (manifest.jsonl + checksums.sha256), a tool-use release (manifest.json), env_memory.json, or JSONL with one environment per line.
        </p>
        <textarea
          value={paths}
          onChange={(e) => setPaths(e.target.value)}
          rows={3}
          placeholder="/data/spade_run/spade_games_cache"
          aria-label="Paths to import"
          data-testid="import-paths"
          disabled={running}
        />
        <label className="muted">
          <input type="checkbox" checked={followLinks} onChange={(e) => setFollowLinks(e.target.checked)} disabled={running} data-testid="import-follow-links" /> Follow links
          and manifest entries that lead outside these folders (off: they are listed as not followed)
        </label>
        {desktop ? (
          <div className="row">
            <button onClick={() => void browse(true)} disabled={running}>
              Choose folders…
            </button>
            <button onClick={() => void browse(false)} disabled={running}>
              Choose files…
            </button>
          </div>
        ) : null}
        {error ? <p className="lib-error" role="alert">{error}</p> : null}
        {jobId ? (
          <div className="lib-progress" data-testid="import-progress">
            <div className={`progress-bar ${running ? 'indeterminate' : ''}`} role="progressbar" aria-busy={running} aria-valuetext={`${processed} processed`}>
              <div style={{ width: running ? '40%' : '100%' }} className={progress?.phase === 'failed' ? 'bad' : ''} />
            </div>
            <div className="muted">
              {progress ? `${progress.phase}: ${progress.files} files · ${progress.imported} new · ${progress.updated} updated · ${progress.unchanged} unchanged · ${progress.skipped} skipped` : 'starting…'}
              {progress?.currentPath && running ? <div className="mono lib-current">{progress.currentPath}</div> : null}
            </div>
          </div>
        ) : null}
        {progress?.phase === 'failed' ? <p className="lib-error">Import failed: {progress.error}</p> : null}
        {summary ? (
          <div className="lib-summary" data-testid="import-summary">
            <p>
              <b>{summary.imported}</b> imported, {summary.updated} updated, {summary.unchanged} already present, {summary.statsAttached} stats attached
              {summary.cancelled ? ' — cancelled (run it again to finish)' : ''}.
            </p>
            {summary.flagged.length ? (
              <details open>
                <summary>{summary.flagged.length} flagged</summary>
                <ul>
                  {summary.flagged.map((f) => (
                    <li key={f.path + f.flag}>
                      <span className="mono">{f.path}</span>: {f.flag} ({f.detail})
                    </li>
                  ))}
                </ul>
              </details>
            ) : null}
            {summary.skippedTotal ? (
              <details open>
                <summary>
                  {summary.skippedTotal} skipped ({Object.entries(summary.skippedByReason).map(([k, n]) => `${n} ${k}`).join(', ')})
                </summary>
                <ul className="lib-skipped" data-testid="import-skipped">
                  {summary.skipped.slice(0, 500).map((k) => (
                    <li key={k.path}>
                      <span className="mono">{k.path}</span> — {k.reason}
                    </li>
                  ))}
                  {summary.skippedTotal > summary.skipped.length ? <li className="muted">… and {summary.skippedTotal - summary.skipped.length} more, counted by reason above{summary.skippedLog ? `; all are listed in ${summary.skippedLog}` : ''}</li> : null}
                </ul>
              </details>
            ) : (
              <p className="muted">Nothing was skipped.</p>
            )}
          </div>
        ) : null}
        <div className="modal-actions">
          {running ? (
            <button onClick={() => void backend().call('memory.importCancel', { jobId: jobId! })} data-testid="import-cancel">
              Cancel
            </button>
          ) : (
            <button className="primary" onClick={() => void start()} disabled={!paths.trim()} data-testid="import-start">
              Import
            </button>
          )}
          <button onClick={onClose} disabled={running}>
            Close
          </button>
        </div>
    </Dialog>
  );
}
