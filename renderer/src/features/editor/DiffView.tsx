import { useEffect, useState } from 'react';
import { DiffEditor } from '../../monaco/DiffEditor';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';
import type { ViewProps } from '../../views/registry';

type Side = { hash: string } | { draft: number };

/** Any two versions, or the draft against a version, in Monaco's diff editor. */
export function DiffView({ tab }: ViewProps<'editor-diff'>) {
  const { envId, left, right } = tab.target;
  const toSide = (k: string | undefined): Side => (k === 'draft' ? { draft: envId } : { hash: k ?? '' });
  const [data, setData] = useState<{ left: { label: string; source: string }; right: { label: string; source: string } } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [inline, setInline] = useState(false);
  const [nonce, setNonce] = useState(0);
  useEffect(() => {
    void attempt('editor', 'Compare', () => backend().call('editor.diff', { left: toSide(left), right: toSide(right) }), { show: setError }).then((d) => d && setData(d));
    // The params identify the tab; `nonce` is the refresh button.
  }, [left, right, envId, nonce]);
  if (error) return <p className="pad">Cannot compare: {error}</p>;
  if (!data) return <p className="pad muted">Loading…</p>;
  return (
    <div className="fill column" data-testid="env-diff">
      <div className="toolbar">
        <span data-testid="diff-left">{data.left.label}</span>
        <span className="muted">↔</span>
        <span data-testid="diff-right">{data.right.label}</span>
        <div className="spacer" />
        <button aria-pressed={inline} onClick={() => setInline((v) => !v)}>
          {inline ? 'Side by side' : 'Inline'}
        </button>
        <button onClick={() => setNonce((n) => n + 1)}>Refresh</button>
      </div>
      <div className="fill">
        <DiffEditor original={data.left.source} modified={data.right.source} inline={inline} ariaLabel="Compare versions" />
      </div>
    </div>
  );
}
