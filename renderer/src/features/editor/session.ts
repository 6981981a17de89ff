import type { CallOutput, Diagnostic, EnvDetail, LoadCheck, VersionInfo } from '../../../../core/api';
import { backend, useApp, type Problem } from '../../store/app';
import { attempt } from '../../store/report';
import { tabId, useWorkbench } from '../../store/workbench';
import type { Monaco } from '../../monaco/setup';

type Editor = ReturnType<Monaco['editor']['create']>;

/** Quiet time after the last keystroke before the draft is written and the parser asked. */
export const DRAFT_DEBOUNCE_MS = 300;
export const SYNTAX_DEBOUNCE_MS = 250;

export function editorTabId(envId: number): string {
  return tabId({ kind: 'editor', envId });
}

/**
 * One open environment tab. The keystroke path only flips a flag and (re)arms two timers; reading
 * the buffer, writing the draft and asking Python's parser all happen after the typing pauses, so
 * autosave costs the typist nothing (see bench row editor.autosave_keystroke_ratio).
 */
export class EditorSession {
  env: EnvDetail;
  /** The version this buffer was edited from: the parent of the next save. */
  baseHash: string;
  savedSource: string;
  savedHint: string;
  dirty = false;
  autosave = true;
  code: Editor | null = null;
  hint: Editor | null = null;
  monaco: Monaco | null = null;
  lastCheck: LoadCheck | null = null;
  /** SPADE's loading checks while they run (seconds, more on Pyodide's first start): shown with Cancel. */
  checking: { requestId: string; startedAt: number; cancelling: boolean } | null = null;
  /** The version message typed in the toolbar: Ctrl+S and the Save button both use it. */
  message = '';
  syntax: Diagnostic[] = [];
  private draftTimer: ReturnType<typeof setTimeout> | null = null;
  private syntaxTimer: ReturnType<typeof setTimeout> | null = null;
  private syntaxSeq = 0;
  private draftWrite: Promise<void> = Promise.resolve();
  private listeners = new Set<() => void>();

  constructor(env: EnvDetail, draft: { baseHash: string | null; source: string; hint: string | null } | null) {
    this.env = env;
    this.baseHash = draft?.baseHash ?? env.hash;
    this.savedSource = env.source;
    this.savedHint = env.hint ?? '';
    this.dirty = draft !== null;
    // Off only for the keystroke benchmark's baseline (bench/suites/editor.ts).
    this.autosave = globalThis.localStorage?.getItem('spade.editor.autosave') !== 'off';
  }

  get tabId(): string {
    return editorTabId(this.env.id);
  }

  /**
   * SPADE's loading checks on the buffer. Cancel (cancelLoadCheck) stops their interpreter in the
   * engine; the previous result stays. 'cancelled' when it was, 'failed' when the engine could not
   * run them (said in the status bar).
   */
  async runLoadCheck(): Promise<'done' | 'cancelled' | 'failed'> {
    if (this.checking) return 'cancelled';
    const requestId = this.newCheckId();
    this.checking = { requestId, startedAt: Date.now(), cancelling: false };
    this.notify();
    let cancelled = false;
    const check = await attempt('editor', 'SPADE loading checks', () => backend().call('editor.checkLoad', { source: this.currentSource(), requestId }), {
      onCancelled: () => (cancelled = true),
    });
    this.checking = null;
    this.notify();
    if (!check) return cancelled ? 'cancelled' : 'failed';
    this.lastCheck = check;
    this.setMarkers('spade-load', check.diagnostics);
    this.publishProblems();
    return 'done';
  }

  private newCheckId(): string {
    return `check-${this.env.id}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  }

  cancelLoadCheck(): void {
    if (!this.checking || this.checking.cancelling) return;
    this.checking = { ...this.checking, cancelling: true };
    this.notify();
    const { requestId } = this.checking;
    // Nothing to say when it fails: the check it meant to stop ends (or fails) and says so itself.
    void attempt('editor', 'Cancel the loading checks', () => backend().call('editor.checkLoadCancel', { requestId }), { quiet: 'warn' });
  }

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
  private notify(): void {
    for (const l of this.listeners) l();
  }

  attachCode(editor: Editor, monaco: Monaco): void {
    this.code = editor;
    this.monaco = monaco;
    editor.onDidChangeModelContent(() => this.onKeystroke(true));
    this.scheduleSyntax();
  }

  attachHint(editor: Editor): void {
    this.hint = editor;
    editor.onDidChangeModelContent(() => this.onKeystroke(false));
  }

  private setDirty(d: boolean): void {
    if (this.dirty === d) return;
    this.dirty = d;
    useWorkbench.getState().markDirty(this.tabId, d);
    this.notify();
  }

  private onKeystroke(code: boolean): void {
    if (!this.dirty) this.setDirty(true);
    if (this.autosave) {
      if (this.draftTimer) clearTimeout(this.draftTimer);
      this.draftTimer = setTimeout(() => void this.flushDraft(), DRAFT_DEBOUNCE_MS);
    }
    if (code) this.scheduleSyntax();
  }

  currentSource(): string {
    return this.code?.getValue() ?? this.savedSource;
  }
  currentHint(): string {
    return this.hint?.getValue() ?? this.savedHint;
  }

  /** Writes the draft now (also called when the page is hidden or closed). */
  flushDraft(): Promise<void> {
    if (this.draftTimer) {
      clearTimeout(this.draftTimer);
      this.draftTimer = null;
    }
    if (!this.code) return this.draftWrite;
    const source = this.currentSource();
    const hint = this.currentHint();
    const envId = this.env.id;
    // Chained so two writes never race and the last text always wins.
    // A draft that cannot be kept is said in the status bar (it was only logged): the person
    // would otherwise believe the typing is safe until the tab closes.
    this.draftWrite = this.draftWrite.then(async () => {
      await attempt('editor', `Could not keep the draft of ${this.env.name}`, async () => {
        if (source === this.savedSource && hint === this.savedHint) {
          await backend().call('editor.draftDiscard', { envId });
          if (this.currentSource() === source && this.currentHint() === hint) this.setDirty(false);
        } else {
          await backend().call('editor.draftSave', { envId, baseHash: this.baseHash, source, hint: hint === this.savedHint ? null : hint });
        }
      });
    });
    return this.draftWrite;
  }

  hasPendingDraft(): boolean {
    return this.draftTimer !== null;
  }

  private scheduleSyntax(): void {
    if (this.syntaxTimer) clearTimeout(this.syntaxTimer);
    this.syntaxTimer = setTimeout(() => void this.checkSyntax(), SYNTAX_DEBOUNCE_MS);
  }

  async checkSyntax(): Promise<void> {
    this.syntaxTimer = null;
    if (!this.code) return;
    const seq = ++this.syntaxSeq;
    const model = this.code.getModel();
    const versionId = model?.getAlternativeVersionId();
    // Runs while typing: an engine that cannot check says so in the Logs, not as a notice per pause.
    const answer = await attempt('editor', 'Syntax check unavailable', () => backend().call('editor.checkSyntax', { source: this.currentSource() }), { quiet: 'warn' });
    // A result for text that has since changed would point at the wrong place; drop it.
    if (!answer || seq !== this.syntaxSeq || !model || model.isDisposed() || model.getAlternativeVersionId() !== versionId) return;
    this.syntax = answer.diagnostics;
    this.setMarkers('python-syntax', answer.diagnostics);
    this.publishProblems();
  }

  setMarkers(owner: string, list: Diagnostic[]): void {
    const model = this.code?.getModel();
    if (!model || !this.monaco) return;
    const sev = this.monaco.MarkerSeverity;
    this.monaco.editor.setModelMarkers(
      model,
      owner,
      list.map((d) => ({
        severity: d.severity === 'error' ? sev.Error : d.severity === 'warning' ? sev.Warning : sev.Info,
        message: d.stage ? `[${d.stage}] ${d.message}` : d.message,
        startLineNumber: d.line,
        startColumn: d.column,
        endLineNumber: d.endLine,
        endColumn: d.endColumn,
        source: d.source,
      })),
    );
  }

  publishProblems(): void {
    const all = [...this.syntax, ...(this.lastCheck?.diagnostics ?? [])];
    const problems: Problem[] = all.map((d, i) => ({
      id: `editor:${this.env.id}:${i}`,
      severity: d.severity,
      message: `${this.env.name}:${d.line}:${d.column} ${d.message}`,
      source: d.source,
      target: { tab: { kind: 'editor', envId: this.env.id }, title: this.env.name, line: d.line },
    }));
    useApp.getState().setProblems(`editor:${this.env.id}`, problems);
    this.notify();
  }

  setMessage(m: string): void {
    this.message = m;
    this.notify();
  }

  /** Ctrl/Cmd+S: a new version whose parent is the one edited; then SPADE's loading checks. */
  async save(message: string = this.message.trim()): Promise<{ hash: string; created: boolean } | null> {
    if (!this.code) return null;
    const source = this.currentSource();
    const hint = this.currentHint();
    if (this.draftTimer) clearTimeout(this.draftTimer);
    this.draftTimer = null;
    await this.draftWrite;
    // The checks after the save take seconds (more on Pyodide's first start): the same line and
    // Cancel as "Run SPADE loading checks"; a cancelled check leaves the version saved.
    const requestId = this.checking ? undefined : this.newCheckId();
    if (requestId) {
      this.checking = { requestId, startedAt: Date.now(), cancelling: false };
      this.notify();
    }
    let r: CallOutput<'editor.save'>;
    try {
      r = await backend().call('editor.save', {
        envId: this.env.id,
        parentHash: this.baseHash,
        source,
        hint: hint === this.savedHint ? null : hint,
        message,
        ...(requestId ? { requestId } : {}),
      });
    } finally {
      if (requestId) {
        this.checking = null;
        this.notify();
      }
    }
    this.baseHash = r.hash;
    this.savedSource = source;
    this.savedHint = hint;
    this.env = { ...this.env, hash: r.hash, source, hint: hint || this.env.hint, versions: r.versions };
    if (r.created && message === this.message.trim()) this.message = '';
    this.lastCheck = r.check;
    this.setMarkers('spade-load', r.check.diagnostics);
    this.publishProblems();
    if (this.currentSource() === source && this.currentHint() === hint) this.setDirty(false);
    else void this.flushDraft();
    this.notify();
    return r;
  }

  /** Loads a source into the buffer (after a revert, or discarding the draft) as the saved text. */
  replaceSaved(env: EnvDetail): void {
    this.env = env;
    this.baseHash = env.hash;
    this.savedSource = env.source;
    this.savedHint = env.hint ?? '';
    if (this.code && this.code.getValue() !== env.source) this.code.setValue(env.source);
    if (this.hint && this.hint.getValue() !== this.savedHint) this.hint.setValue(this.savedHint);
    if (this.draftTimer) clearTimeout(this.draftTimer);
    this.draftTimer = null;
    this.setDirty(false);
    this.notify();
  }

  setVersions(versions: VersionInfo[]): void {
    this.env = { ...this.env, versions };
    this.notify();
  }

  dispose(): void {
    if (this.draftTimer) void this.flushDraft();
    if (this.syntaxTimer) clearTimeout(this.syntaxTimer);
    useApp.getState().setProblems(`editor:${this.env.id}`, []);
    this.code = null;
    this.hint = null;
  }
}

/** Open sessions by tab id; commands act on the active one. */
export const sessions = new Map<string, EditorSession>();

export function activeSession(): EditorSession | null {
  const id = useWorkbench.getState().activeTabId;
  return id ? (sessions.get(id) ?? null) : null;
}

/** Writes every pending draft at once: the page is going away (reload, close, kill of the window). */
export function flushAllDrafts(): void {
  for (const s of sessions.values()) if (s.hasPendingDraft()) void s.flushDraft();
}
