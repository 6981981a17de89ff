import { backend, refreshHealth, updateSettings, useApp } from './store/app';
import { useCommands } from './store/commands';
import { useWorkbench } from './store/workbench';

/** Shell-level commands; features register their own next to their views. */
export function registerBuiltinCommands(): void {
  const wb = () => useWorkbench.getState();
  useCommands.getState().register([
    {
      id: 'view.toggleTheme',
      category: 'View',
      title: 'Toggle Light/Dark Theme',
      run: async () => {
        const current = document.documentElement.dataset.theme === 'dark' ? 'dark' : 'light';
        await updateSettings({ theme: current === 'dark' ? 'light' : 'dark' });
      },
    },
    { id: 'view.themeSystem', category: 'View', title: 'Theme: Follow the System', run: () => updateSettings({ theme: 'system' }) },
    { id: 'view.toggleSide', category: 'View', title: 'Toggle Side Panel', keybinding: 'Ctrl+B', run: () => wb().toggleSide() },
    { id: 'view.togglePanel', category: 'View', title: 'Toggle Bottom Panel', keybinding: 'Ctrl+J', run: () => wb().toggleBottom() },
    { id: 'view.problems', category: 'View', title: 'Show Problems', run: () => wb().showBottom('problems') },
    { id: 'view.logs', category: 'View', title: 'Show Logs', run: () => wb().showBottom('logs') },
    { id: 'view.library', category: 'View', title: 'Show Library', run: () => wb().setActivity('library') },
    { id: 'view.jobs', category: 'View', title: 'Show Jobs', run: () => wb().setActivity('jobs') },
    { id: 'app.settings', category: 'Preferences', title: 'Open Settings', run: () => wb().openTab({ kind: 'settings' }, 'Settings') },
    { id: 'app.welcome', category: 'Help', title: 'Welcome', run: () => wb().openTab({ kind: 'welcome' }, 'Welcome') },
    { id: 'app.scratch', category: 'File', title: 'New Scratch Python Buffer', run: () => wb().openTab({ kind: 'scratch', n: Date.now() }, 'Scratch.py') },
    {
      id: 'app.health',
      category: 'Developer',
      title: 'Check Backend Health',
      run: async () => {
        await refreshHealth();
        const h = useApp.getState().health;
        useApp.getState().addLog({
          time: new Date().toISOString(),
          level: h?.ok ? 'info' : 'error',
          source: 'health',
          message: h ? `backend ok=${h.ok}, schema ${h.database.schemaVersion}, up ${h.uptimeSec.toFixed(0)} s` : 'backend unreachable',
        });
        wb().showBottom('logs');
      },
    },
    {
      id: 'help.paper',
      category: 'Help',
      title: 'Open the SPADE Paper',
      run: async () => {
        const url = 'https://arxiv.org/abs/2608.19197';
        const { opened } = await backend().call('app.openExternal', { url });
        if (!opened) window.open(url, '_blank', 'noopener,noreferrer');
      },
    },
  ]);
}
