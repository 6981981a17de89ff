import './openenv.css';
import { useCommands } from '../../store/commands';
import { useWorkbench } from '../../store/workbench';
import { lazyView, registerView } from '../../views/registry';
import { openOpenEnvUrl } from './open';

export function openOpenEnv(): void {
  useWorkbench.getState().openTab({ kind: 'openenv' }, 'OpenEnv Server');
}

export function registerOpenEnvFeature(): void {
  registerView('openenv', lazyView(() => import('./OpenEnvView').then((m) => m.OpenEnvView)));
  registerView('openenv-remote', lazyView(() => import('./RemoteEnvView').then((m) => m.RemoteEnvView)));
  useCommands.getState().register([
    { id: 'openenv.show', category: 'Episodes', title: 'Serve Environments over OpenEnv', run: () => openOpenEnv() },
    { id: 'openenv.openUrl', category: 'Episodes', title: 'Open OpenEnv URL…', run: () => openOpenEnvUrl() },
  ]);
}
