import { useState } from 'react';
import { backend } from '../../store/app';
import { useCall } from '../../store/useCall';
import type { ViewProps } from '../../views/registry';
import { ErrorText } from '../../components/ErrorText';
import { PathField } from '../../components/PathField';
import { EXPORT_LAYOUT, EXPORT_ROUND_TRIP } from './exportLayout';

/** Writes the curated seed set (or a tag) in SPADE's own layout, through the memory's exporter. */
export function ExportView(_props: ViewProps<'editor-export'>) {
  const [outDir, setOutDir] = useState('');
  const [format, setFormat] = useState<'spade' | 'jsonl'>('spade');
  const [which, setWhich] = useState<'seeds' | 'tag'>('seeds');
  const [tag, setTag] = useState('');
  const [result, setResult] = useState<{ count: number; files: string[]; notes: string[]; outDir: string } | null>(null);
  const call = useCall('export');
  const busy = call.busy !== null;
  const error = call.error;

  const run = () =>
    call.run('Export', async () => {
      setResult(null);
      const selection = which === 'seeds' ? { seeds: true } : { tag: tag.trim() };
      setResult(await backend().call('memory.export', { selection, format, outDir: outDir.trim() }));
    });

  return (
    <div className="pad column export-view" data-testid="export-view">
      <h2>Export a seed set</h2>
      <p className="muted">SPADE&apos;s layout writes:</p>
      <ul className="muted small export-layout" data-testid="export-layout">
        {EXPORT_LAYOUT.map((f) => (
          <li key={f.path}>
            <code>{f.path}</code> {f.what}
          </li>
        ))}
      </ul>
      <p className="muted small">JSONL writes one environments.jsonl (code, hint and every field). {EXPORT_ROUND_TRIP}</p>
      <div className="row">
        <label>
          <input type="radio" name="export-which" checked={which === 'seeds'} onChange={() => setWhich('seeds')} /> All seeds
        </label>
        <label>
          <input type="radio" name="export-which" checked={which === 'tag'} onChange={() => setWhich('tag')} /> Tagged
        </label>
        {which === 'tag' ? <input aria-label="Export tag" placeholder="tag" value={tag} onChange={(e) => setTag(e.target.value)} /> : null}
        <label>
          Format
          <select aria-label="Export format" value={format} onChange={(e) => setFormat(e.target.value as 'spade' | 'jsonl')}>
            <option value="spade">SPADE layout</option>
            <option value="jsonl">JSONL</option>
          </select>
        </label>
      </div>
      <div className="row">
        <PathField className="fill" label="Export folder" placeholder="Folder on the workbench machine, e.g. ~/seeds" value={outDir} onChange={setOutDir} testId="export-folder" />
        <button onClick={() => void run()} disabled={busy || !outDir.trim() || (which === 'tag' && !tag.trim())}>
          {busy ? 'Exporting…' : 'Export'}
        </button>
      </div>
      <ErrorText error={error} />
      {result ? (
        <div data-testid="export-result">
          <p>
            Wrote {result.count} environment{result.count === 1 ? '' : 's'} to <code>{result.outDir}</code>
          </p>
          {result.notes.map((n) => (
            <p key={n} className="muted" data-testid="export-note">
              Note: {n}
            </p>
          ))}
          <ul className="muted small">
            {result.files.slice(0, 20).map((f) => (
              <li key={f}>{f}</li>
            ))}
            {result.files.length > 20 ? <li>… {result.files.length - 20} more</li> : null}
          </ul>
        </div>
      ) : null}
    </div>
  );
}
