import './runs.css';
import { useCommands } from '../../store/commands';
import { lazyView, registerView } from '../../views/registry';
import { openRuns } from './open';

export function registerRunsFeature(): void {
  registerView('runs', lazyView(() => import('./RunsView').then((m) => m.RunsView)));
  useCommands.getState().register([{ id: 'runs.show', category: 'Runs', title: 'Show Model Runs', run: () => openRuns() }]);
}
