import './openenv.css';
import { useCommands } from '../../store/commands';
import { useWorkbench } from '../../store/workbench';
import { lazyView, registerView } from '../../views/registry';

export function openOpenEnv(): void {
  useWorkbench.getState().openTab({ kind: 'openenv' }, 'OpenEnv Server');
}

export function registerOpenEnvFeature(): void {
  registerView('openenv', lazyView(() => import('./OpenEnvView').then((m) => m.OpenEnvView)));
  useCommands.getState().register([{ id: 'openenv.show', category: 'Episodes', title: 'Serve Environments over OpenEnv', run: () => openOpenEnv() }]);
}
