import { registerEnvAction } from '../../views/envActions';
import { backend, log, useApp } from '../../store/app';
import { useCommands, type Command } from '../../store/commands';
import { registerQuickOpenProvider } from '../../store/quickOpen';
import { envIdOf, useWorkbench } from '../../store/workbench';
import { lazyView, registerView } from '../../views/registry';
import { forkEnvironment, openDiff, openEditor, openExport, openNewEnvironment, openWriteBack } from './open';
import { activeSession, editorTabId, flushAllDrafts } from './session';
import { environments, useEnvironments } from '../../store/environments';
import { attempt } from '../../store/report';

function withSession(run: (s: NonNullable<ReturnType<typeof activeSession>>) => void | Promise<void>): () => Promise<void> {
  return async () => {
    const s = activeSession();
    if (!s) {
      log('info', 'editor', 'Open an environment in the editor first');
      return;
    }
    await run(s);
  };
}

function editorCommands(): Command[] {
  return [
    {
      id: 'editor.save',
      category: 'Editor',
      title: 'Save as New Version',
      keybinding: 'Ctrl+S',
      run: withSession(async (s) => {
        // The message typed in the toolbar goes with it (it was dropped before).
        if ((await attempt('editor', 'Save failed', () => s.save())) === undefined) useWorkbench.getState().showBottom('logs');
      }),
    },
    {
      id: 'editor.saveWithMessage',
      category: 'Editor',
      title: 'Save as New Version with Message…',
      run: withSession(async (s) => {
        const message = window.prompt('Version message', '');
        if (message === null) return;
        await s.save(message.trim());
      }),
    },
    {
      id: 'editor.discardDraft',
      category: 'Editor',
      title: 'Discard Unsaved Changes',
      run: withSession(async (s) => {
        await backend().call('editor.draftDiscard', { envId: s.env.id });
        const { env } = await backend().call('editor.open', { envId: s.env.id });
        s.replaceSaved(env);
      }),
    },
    {
      id: 'editor.compareWithSaved',
      category: 'Editor',
      title: 'Compare Buffer with Saved Version',
      run: withSession(async (s) => {
        if (s.dirty) await s.flushDraft();
        openDiff(s.env.id, { hash: s.baseHash }, s.dirty ? { draft: s.env.id } : { hash: s.baseHash }, s.env.name);
      }),
    },
    {
      id: 'editor.compareWithParent',
      category: 'Editor',
      title: 'Compare Head with Its Parent',
      run: withSession((s) => {
        const head = s.env.versions.find((v) => v.hash === s.baseHash);
        if (!head?.parentHash) return log('info', 'editor', `${s.env.name}: the head has no parent`);
        openDiff(s.env.id, { hash: head.parentHash }, { hash: head.hash }, s.env.name);
      }),
    },
    { id: 'editor.checkSyntax', category: 'Editor', title: 'Check Python Syntax Now', run: withSession((s) => s.checkSyntax()) },
    {
      id: 'editor.checkLoad',
      category: 'Editor',
      title: 'Run SPADE Loading Checks',
      run: withSession(async (s) => {
        const r = await s.runLoadCheck();
        if (r === 'cancelled') return log('info', 'editor', `${s.env.name}: loading checks cancelled`);
        if (r === 'failed') return;
        if (s.lastCheck?.diagnostics.length) useWorkbench.getState().showBottom('problems');
      }),
    },
    { id: 'editor.fork', category: 'Editor', title: 'Fork as New Environment', run: withSession((s) => forkEnvironment(s)) },
    {
      id: 'editor.writeBack',
      category: 'Editor',
      title: 'Write Back to Source File…',
      run: withSession(async (s) => {
        if (s.dirty) await s.save();
        openWriteBack(s.env.id, s.env.name);
      }),
    },
    {
      id: 'editor.toggleSeed',
      category: 'Curation',
      title: 'Toggle Seed Flag',
      run: withSession(async (s) => {
        // The flag as the library holds it now (another view may have changed it since the tab opened).
        const seed = useEnvironments.getState().byId[s.env.id]?.seed ?? s.env.seed;
        await environments.setSeed([s.env.id], !seed);
      }),
    },
    { id: 'editor.exportSeeds', category: 'Curation', title: 'Export Seed Set…', run: () => openExport() },
    { id: 'editor.newGame', category: 'File', title: 'New Environment: Cognitive Game Snippet', run: () => openNewEnvironment('game') },
    { id: 'editor.newToolUse', category: 'File', title: 'New Environment: Tool-Use Snippet', run: () => openNewEnvironment('tool-use') },
    { id: 'editor.newFromPaste', category: 'File', title: 'New Environment from Pasted Text', run: () => openNewEnvironment('paste') },
    { id: 'editor.newFromFile', category: 'File', title: 'New Environment from a File…', run: () => openNewEnvironment('file') },
    {
      id: 'editor.find',
      category: 'Editor',
      title: 'Find / Replace in Environment',
      run: withSession((s) => {
        s.code?.focus();
        void s.code?.getAction('editor.action.startFindReplaceAction')?.run();
      }),
    },
    {
      id: 'editor.editActive',
      category: 'Editor',
      title: 'Edit This Environment',
      run: () => {
        const wb = useWorkbench.getState();
        const tab = wb.tabs.find((t) => t.id === wb.activeTabId);
        const id = envIdOf(tab?.target);
        if (tab && id !== null) openEditor(id, tab.title.replace(/^(Audit|Write back): /, ''));
        else log('info', 'editor', 'Open an environment from the Library first');
      },
    },
    {
      id: 'editor.reopenDrafts',
      category: 'Editor',
      title: 'Reopen Environments with Unsaved Drafts',
      run: () => reopenDrafts(),
    },
  ];
}

/** A restarted window gets back every environment left with a draft, marked unsaved. */
async function reopenDrafts(): Promise<void> {
  const drafts = await attempt('editor', 'Could not list unsaved drafts', () => backend().call('editor.drafts', {}));
  if (!drafts) return;
  const wb = useWorkbench.getState();
  for (const d of [...drafts].reverse()) {
    if (wb.tabs.some((t) => t.id === editorTabId(d.envId))) continue;
    openEditor(d.envId, d.name);
    useWorkbench.getState().markDirty(editorTabId(d.envId), true);
  }
}

export function registerEditorFeature(): void {
  registerEnvAction({ id: 'edit', label: 'Edit', run: (e) => openEditor(e.id, e.name) });
  registerEnvAction({ id: 'write-back', label: 'Write back…', run: (e) => openWriteBack(e.id, e.name) });
  registerView('write-back', lazyView(() => import('./WriteBackView').then((m) => m.WriteBackView)));
  registerView('editor', lazyView(() => import('./EnvEditorView').then((m) => m.EnvEditorView)));
  registerView('editor-diff', lazyView(() => import('./DiffView').then((m) => m.DiffView)));
  registerView('editor-new', lazyView(() => import('./NewEnvironmentView').then((m) => m.NewEnvironmentView)));
  registerView('editor-export', lazyView(() => import('./ExportView').then((m) => m.ExportView)));
  useCommands.getState().register(editorCommands());

  registerQuickOpenProvider(async (query) => {
    const { rows } = await backend().call('memory.search', { query, limit: 30, sort: query.trim() ? undefined : { field: 'updated', dir: 'desc' } });
    return rows.map((r) => ({
      // The library's provider opens the detail tab; these open the same environment for editing.
      id: `edit:${r.id}`,
      label: r.name,
      detail: `edit in the editor · ${r.kind}${r.skill ? ` · ${r.skill}` : ''}${r.seed ? ' · seed' : ''}`,
      run: () => openEditor(r.id, r.name),
    }));
  });

  // Drafts are written after a short pause; a closing or reloading page writes what is pending now.
  window.addEventListener('pagehide', flushAllDrafts);
  window.addEventListener('beforeunload', flushAllDrafts);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'hidden') flushAllDrafts();
  });

  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    void reopenDrafts();
  };
  if (useApp.getState().connection === 'connected') restore();
  useApp.subscribe((s) => {
    if (s.connection === 'connected') restore();
  });
}

export { openEditor };
