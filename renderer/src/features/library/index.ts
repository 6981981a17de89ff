import './library.css';
import { lazyView, registerView } from '../../views/registry';
import { registerSidePanel } from '../../views/sidePanels';
import { registerQuickOpenProvider } from '../../store/quickOpen';
import { useCommands } from '../../store/commands';
import { useWorkbench } from '../../store/workbench';
import { backend } from '../../store/app';
import { LibraryPanel } from './LibraryPanel';
import { openEnvironment } from './open';
import { useLibrary } from './store';

export { openEnvironment };

/** The Library: side panel (search, facets, virtual table), environment tabs, import, quick open. */
export function registerLibrary(): void {
  registerSidePanel('library', LibraryPanel);
  registerView('environment', lazyView(() => import('./EnvironmentView').then((m) => m.EnvironmentView)));
  registerQuickOpenProvider(async (query) => {
    const r = await backend().call('memory.search', { query, limit: 20 });
    return r.rows.map((e) => ({
      id: `env:${e.id}`,
      label: e.name,
      detail: `${e.kind === 'tool-use' ? 'tool use' : 'game'} · ${e.skill ?? 'no skill'} · ${e.hash.slice(0, 10)}`,
      run: () => openEnvironment(e.id, e.name),
    }));
  });
  useCommands.getState().register([
    {
      id: 'library.import',
      category: 'Library',
      title: 'Import Environments…',
      run: () => {
        useWorkbench.getState().setActivity('library');
        useLibrary.getState().setImportOpen(true);
      },
    },
    {
      id: 'library.search',
      category: 'Library',
      title: 'Search Environments',
      run: () => {
        const wb = useWorkbench.getState();
        if (wb.activity !== 'library' || !wb.sideVisible) wb.setActivity('library');
        setTimeout(() => document.querySelector<HTMLInputElement>('[data-testid=library-search]')?.focus(), 0);
      },
    },
    { id: 'library.refresh', category: 'Library', title: 'Refresh Library', run: () => useLibrary.getState().refresh() },
  ]);
}
