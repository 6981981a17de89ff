import { useCallback, useEffect, useState } from 'react';
import type { WriteBackPreview } from '../../../../core/api/calls/editor';
import { DiffEditor } from '../../monaco/DiffEditor';
import { backend, log } from '../../store/app';
import { useCall } from '../../store/useCall';
import type { ViewProps } from '../../views/registry';
import { PathField } from '../../components/PathField';

function download(name: string, text: string): void {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type: 'text/x-diff' }));
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

/**
 * Sending a fixed environment back to the run: the diff against the file it came from first, then
 * the write (the original kept beside it); or a patch; or an export of just this environment.
 */
export function WriteBackView({ tab }: ViewProps<'write-back'>) {
  const envId = tab.target.envId;
  const [p, setP] = useState<WriteBackPreview | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [outDir, setOutDir] = useState('');
  const [exported, setExported] = useState<string | null>(null);
  const { busy, error, run } = useCall('write-back');

  const preview = useCallback(
    () =>
      run('Preview', async () => {
        setDone(null);
        setP(await backend().call('editor.writeBackPreview', { envId }));
      }),
    [envId, run],
  );
  useEffect(() => {
    void preview();
  }, [preview]);

  const write = () =>
    run('Write', async () => {
      if (!p) return;
      const r = await backend().call('editor.writeBack', { envId, hash: p.hash, expectedFileHash: p.fileHash });
      const msg = r.written ? `Wrote ${r.hash.slice(0, 12)} to ${r.path}${r.backupPath ? `; the original is kept as ${r.backupPath}` : ''}` : `${r.path} already holds ${r.hash.slice(0, 12)}`;
      log('info', 'write-back', msg);
      setDone(msg);
      // Keep showing the diff that was written (unmounting Monaco's diff editor mid-update logs errors).
      setP(r);
    });
  const exportOne = () =>
    run('Export', async () => {
      const r = await backend().call('memory.export', { selection: { ids: [envId] }, format: 'spade', outDir: outDir.trim() });
      setExported(`Exported to ${r.outDir} (${r.files.length} files)`);
    });
  const fileName = p ? (p.path.split(/[\\/]/).pop() ?? 'environment.py') : 'environment.py';

  return (
    <div className="fill column write-back" data-testid="write-back-view">
      <div className="toolbar">
        <strong>Write back</strong>
        {p && (
          <span className="muted" data-testid="write-back-target">
            version {p.hash.slice(0, 12)} → <code>{p.path}</code>
          </span>
        )}
        <div className="spacer" />
        <button onClick={() => void preview()} disabled={busy !== null}>
          Refresh
        </button>
        <button onClick={() => p && download(`${fileName}.patch`, p.patch)} disabled={!p?.patch} title="A unified diff; apply it with git apply or patch -p1">
          Save patch
        </button>
        <button onClick={() => p && void navigator.clipboard?.writeText(p.patch)} disabled={!p?.patch}>
          Copy patch
        </button>
        <button className="primary" data-testid="write-back-apply" onClick={() => void write()} disabled={!p || p.state === 'same' || done !== null || busy !== null}>
          {busy === 'Write' ? 'Writing…' : 'Write to file'}
        </button>
      </div>
      {error && <p className="pad-s audit-error" data-testid="write-back-error">{error}</p>}
      {done && <p className="pad-s ok-text" data-testid="write-back-done">{done}</p>}
      {p && !done && (
        <p className="pad-s muted" data-testid="write-back-state">
          {p.state === 'same'
            ? 'The file already holds this version: nothing to write.'
            : p.state === 'missing'
              ? 'The file is gone: writing creates it.'
              : p.fileIsKnownVersion
                ? 'The file holds an earlier version of this environment. Left: the file now; right: what will be written. The file now is kept as .orig.'
                : 'The file was changed outside the workbench (it is none of the versions here). Left: the file now; right: what will be written. The file now is kept as .orig.'}
        </p>
      )}
      <div className="fill">{p && p.state !== 'same' ? <DiffEditor original={p.fileSource ?? ''} modified={p.proposed} ariaLabel="File now and the version to write" /> : null}</div>
      <div className="toolbar">
        <span className="muted">Or export just this environment (SPADE layout):</span>
        <PathField label="Export folder" placeholder="~/folder or /path/to/folder" value={outDir} onChange={setOutDir} />
        <button onClick={() => void exportOne()} disabled={!outDir.trim() || busy !== null}>
          Export
        </button>
        {exported && <span data-testid="write-back-exported">{exported}</span>}
      </div>
    </div>
  );
}
