import { createRoot } from 'react-dom/client';
import './styles.css';
import { createBackend } from './backend';
import { Workbench } from './components/Workbench';
import { refreshHealth, useApp } from './store/app';
import { attempt } from './store/report';
import { registerBuiltinCommands } from './builtinCommands';
import { registerView } from './views/registry';
import { WelcomeView } from './views/WelcomeView';
import { SettingsView } from './views/SettingsView';
import { ScratchView } from './views/ScratchView';
import { runCommand, useCommands } from './store/commands';
import { registerFeatures } from './features';

const b = createBackend();
useApp.setState({ backend: b, connection: b.transport === 'websocket' ? 'connecting' : 'connected' });

registerView('welcome', WelcomeView);
registerView('settings', SettingsView);
registerView('scratch', ScratchView);
registerBuiltinCommands();
registerFeatures();

async function loadShellState(): Promise<void> {
  // Said in the status bar too (it was only logged): without it the settings and pickers are missing.
  await attempt('backend', 'Could not load the workbench state', async () => {
    const [info, settings] = await Promise.all([b.call('app.info', {}), b.call('settings.get', {})]);
    useApp.setState({ info, settings });
    await refreshHealth();
  });
}

b.onConnection((state) => {
  useApp.setState({ connection: state });
  if (state === 'connected') void loadShellState();
});
b.on('settings.changed', (settings) => useApp.setState({ settings }));
b.on('log.line', (line) => useApp.getState().addLog(line));
b.on('ui.command', ({ command }) => {
  if (command === 'palette.open') useCommands.getState().openPalette('commands');
  else if (command === 'quickOpen') useCommands.getState().openPalette('quickOpen');
  else void runCommand(command);
});
if (b.transport !== 'websocket') void loadShellState();
setInterval(() => void refreshHealth(), 5000);

const rootEl = document.getElementById('root');
if (rootEl) createRoot(rootEl).render(<Workbench />);
