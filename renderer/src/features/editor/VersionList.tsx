import { useEffect, useState } from 'react';
import { backend, log } from '../../store/app';
import { openDiff, type DiffSide } from './open';
import type { EditorSession } from './session';
import { attempt } from '../../store/report';

function when(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** The lineage of one environment, newest first, with revert and "compare with…". */
export function VersionList({ session }: { session: EditorSession }) {
  const env = session.env;
  const versions = [...env.versions].reverse();
  const [left, setLeft] = useState<string>(versions[1]?.hash ?? versions[0]?.hash ?? '');
  const [right, setRight] = useState<string>(session.dirty ? 'draft' : (versions[0]?.hash ?? ''));
  // A save adds a version: compare its parent with it by default.
  useEffect(() => {
    setLeft(versions[1]?.hash ?? versions[0]?.hash ?? '');
    setRight(versions[0]?.hash ?? '');
  }, [versions.length]);
  const side = (v: string): DiffSide => (v === 'draft' ? { draft: env.id } : { hash: v });

  const revert = (hash: string) =>
    attempt('editor', 'Revert failed', async () => {
      await session.flushDraft();
      await backend().call('editor.revert', { envId: env.id, hash });
      await backend().call('editor.draftDiscard', { envId: env.id });
      const { env: fresh } = await backend().call('editor.open', { envId: env.id });
      session.replaceSaved(fresh);
      log('info', 'editor', `${env.name}: head is now ${hash.slice(0, 12)}`);
    });

  const options = [
    ...(session.dirty ? [{ value: 'draft', label: 'unsaved draft' }] : []),
    ...versions.map((v) => ({ value: v.hash, label: `${v.hash.slice(0, 10)} ${v.message ? `· ${v.message.slice(0, 40)}` : ''}` })),
  ];

  return (
    <aside className="version-list" aria-label="Versions" data-testid="version-list">
      <div className="pane-title">Versions ({versions.length})</div>
      <div className="compare-with">
        <VersionSelect label="Compare" aria="Compare left" value={left} onChange={setLeft} options={options} />
        <VersionSelect label="with…" aria="Compare right" value={right} onChange={setRight} options={options} />
        <button
          onClick={async () => {
            if (left === 'draft' || right === 'draft') await session.flushDraft();
            openDiff(env.id, side(left), side(right), env.name);
          }}
          disabled={!left || !right}
        >
          Open diff
        </button>
      </div>
      <ol className="versions">
        {versions.map((v) => {
          const head = v.hash === session.baseHash;
          return (
            <li key={v.hash} className={head ? 'head' : ''} data-hash={v.hash}>
              <div className="row">
                <code title={v.hash}>{v.hash.slice(0, 10)}</code>
                {head ? <span className="head-pill">head</span> : null}
                <div className="spacer" />
                {head && !session.dirty ? (
                  // The head against itself shows nothing: compare it with the version it came from.
                  v.parentHash ? (
                    <button className="link" title="Compare this version with its parent" data-testid="version-diff" onClick={() => openDiff(env.id, { hash: v.parentHash! }, { hash: v.hash }, env.name)}>
                      diff
                    </button>
                  ) : null
                ) : (
                  <button className="link" title="Compare this version with the buffer" data-testid="version-diff" onClick={async () => {
                    if (session.dirty) await session.flushDraft();
                    openDiff(env.id, { hash: v.hash }, session.dirty ? { draft: env.id } : { hash: session.baseHash }, env.name);
                  }}>
                    diff
                  </button>
                )}
                {!head ? (
                  <button className="link" title="Make this version the head again (nothing is deleted)" onClick={() => void revert(v.hash)}>
                    revert
                  </button>
                ) : null}
              </div>
              <div className="version-msg">{v.message || <span className="muted">(no message)</span>}</div>
              <div className="muted small">
                {when(v.createdAt)} · {v.bytes} B{v.parentHash ? ` · parent ${v.parentHash.slice(0, 8)}` : ''}
              </div>
            </li>
          );
        })}
      </ol>
    </aside>
  );
}

function VersionSelect(props: { label: string; aria: string; value: string; onChange: (v: string) => void; options: { value: string; label: string }[] }) {
  return (
    <label>
      {props.label}
      <select aria-label={props.aria} value={props.value} onChange={(e) => props.onChange(e.target.value)}>
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </label>
  );
}
