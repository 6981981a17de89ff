import { useEffect, useReducer, useRef, useState } from 'react';
import { CodeEditor } from '../../monaco/CodeEditor';
import { backend, log } from '../../store/app';
import { useWorkbench } from '../../store/workbench';
import type { ViewProps } from '../../views/registry';
import { CurationPanel } from './CurationPanel';
import { installPythonHelp } from './completions';
import { openDiff, openWriteBack } from './open';
import { EditorSession, sessions } from './session';
import { VersionList } from './VersionList';
import { applyAuditMarkers } from '../audit/markers';
import { loadAudit, useAuditResults } from '../../store/auditResults';
import { attempt } from '../../store/report';
import { ProgressLine } from '../../components/ProgressLine';

/** An environment in Monaco: code and hint side by side, versions and curation alongside. */
export function EnvEditorView({ tab }: ViewProps<'editor'>) {
  const envId = tab.target.envId;
  const [session, setSession] = useState<EditorSession | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [, rerender] = useReducer((x: number) => x + 1, 0);
  const [showVersions, setShowVersions] = useState(true);
  const [saving, setSaving] = useState(false);
  const initial = useRef<{ source: string; hint: string } | null>(null);
  const reveal = useWorkbench((s) => s.reveal);

  useEffect(() => {
    const ed = session?.code;
    if (!reveal || reveal.tabId !== tab.id || !ed) return;
    ed.revealLineInCenter(reveal.line);
    ed.setPosition({ lineNumber: reveal.line, column: 1 });
    ed.focus();
  }, [reveal, session, tab.id]);

  useEffect(() => {
    let gone = false;
    let made: EditorSession | null = null;
    void attempt('editor', 'Open the environment', () => backend().call('editor.open', { envId }), { show: setError, current: () => !gone }).then((opened) => {
      if (!opened || gone) return;
      const { env, draft } = opened;
      made = new EditorSession(env, draft);
      initial.current = { source: draft?.source ?? env.source, hint: draft?.hint ?? env.hint ?? '' };
      sessions.set(tab.id, made);
      useWorkbench.getState().markDirty(tab.id, made.dirty);
      setSession(made);
    });
    return () => {
      gone = true;
      if (made) {
        made.dispose();
        if (sessions.get(tab.id) === made) sessions.delete(tab.id);
      }
    };
  }, [envId, tab.id]);

  useEffect(() => session?.subscribe(rerender), [session]);

  // The stored audit of the version being edited marks its offending lines; a save (new head) or
  // a re-audit anywhere replaces them.
  const [codeReady, setCodeReady] = useState(false);
  const baseHash = session?.baseHash ?? null;
  const headAudit = useAuditResults((s) => (baseHash ? s.byHash[baseHash] : undefined));
  useEffect(() => {
    if (!session?.monaco || !session.code || !baseHash || !codeReady) return;
    if (headAudit === undefined) {
      void attempt('editor', 'Stored audit', () => loadAudit(baseHash), { quiet: 'warn' });
      return;
    }
    applyAuditMarkers(session.monaco, session.code.getModel(), headAudit?.checks ?? null);
  }, [session, baseHash, headAudit, codeReady]);

  if (error) return <p className="pad">Could not open environment {envId}: {error}</p>;
  if (!session || !initial.current) return <p className="pad muted">Opening environment {envId}…</p>;
  const env = session.env;

  // As Ctrl+S (the editor.save command): the failure in the status bar, and the Logs opened.
  const save = async () => {
    setSaving(true);
    const r = await attempt('editor', 'Save failed', () => session.save());
    setSaving(false);
    if (r === undefined) useWorkbench.getState().showBottom('logs');
    else if (r) log('info', 'editor', r.created ? `Saved ${env.name} as ${r.hash.slice(0, 12)}` : `${env.name}: no change to the code`);
  };
  const check = session.lastCheck;

  return (
    <div className="fill column env-editor" data-testid="env-editor" data-env-id={env.id}>
      <div className="toolbar env-editor-bar">
        <strong className="env-name" title={env.name}>
          {env.name}
        </strong>
        <span className="muted">
          {env.kind}
          {env.skill ? ` · ${env.skill}` : ''}
        </span>
        <code className="muted" data-testid="head-hash" title={session.baseHash}>
          {session.baseHash.slice(0, 12)}
        </code>
        {session.dirty ? (
          <span className="unsaved-pill" data-testid="unsaved">
            unsaved
          </span>
        ) : null}
        {check ? (
          <span className={`check-pill ${check.ran ? (check.ok ? 'ok' : 'bad') : ''}`} title={check.detail} data-testid="load-check">
            {check.ran ? (check.ok ? 'loads in SPADE' : 'fails SPADE loading') : 'load checks not run'}
          </span>
        ) : null}
        <div className="spacer" />
        <input
          className="commit-message"
          placeholder="Version message (optional)"
          aria-label="Version message"
          data-testid="version-message"
          value={session.message}
          onChange={(e) => session.setMessage(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') void save();
          }}
        />
        <button onClick={() => void save()} disabled={saving} title="Save as a new version (Ctrl+S)">
          {saving ? 'Saving…' : 'Save'}
        </button>
        <button onClick={() => openDiff(env.id, { hash: env.hash }, session.dirty ? { draft: env.id } : { hash: env.hash }, env.name)} title="Compare the buffer with the saved version">
          Diff
        </button>
        {env.sourcePath && env.sourcePath.startsWith('/') ? (
          <button onClick={() => openWriteBack(env.id, env.name)} title={`Write the saved version back to ${env.sourcePath} (diff first)`} data-testid="editor-write-back">
            Write back…
          </button>
        ) : null}
        <button aria-pressed={showVersions} onClick={() => setShowVersions((v) => !v)}>
          Versions
        </button>
      </div>
      {session.checking ? (
        <div className="env-editor-progress">
          <ProgressLine
            label="SPADE's loading checks"
            startedAt={session.checking.startedAt}
            detail="exec, class, instantiate, reset, step in the sandbox"
            onCancel={() => session.cancelLoadCheck()}
            cancelling={session.checking.cancelling}
            testId="load-check-progress"
          />
        </div>
      ) : null}
      <div className="env-editor-body">
        <div className="env-code" aria-label="Environment code">
          <CodeEditor
            value={initial.current.source}
            ariaLabel={`Code of ${env.name}`}
            onReady={(ed, monaco) => {
              installPythonHelp(monaco);
              session.attachCode(ed, monaco);
              setCodeReady(true);
            }}
          />
        </div>
        <div className="env-side">
          <div className="env-hint">
            <div className="pane-title">Hint</div>
            <div className="fill">
              <CodeEditor value={initial.current.hint} language="plaintext" ariaLabel={`Hint of ${env.name}`} onReady={(ed) => {
                  ed.updateOptions({ wordWrap: 'on', lineNumbers: 'off' });
                  session.attachHint(ed);
                }} />
            </div>
          </div>
          <CurationPanel session={session} />
        </div>
        {showVersions ? <VersionList session={session} /> : null}
      </div>
    </div>
  );
}
