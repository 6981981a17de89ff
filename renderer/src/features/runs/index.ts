import './runs.css';
import { useCommands } from '../../store/commands';
import { lazyView, registerView } from '../../views/registry';
import { openRuns } from './open';

export function registerRunsFeature(): void {
  registerView('runs', lazyView(() => import('./RunsView').then((m) => m.RunsView)));
  useCommands.getState().register([
    { id: 'runs.show', category: 'Runs', title: 'Show Model Runs', run: () => openRuns() },
    // The sweep's form heads the Runs page, where its run is listed once it starts.
    { id: 'runs.regretSweep', category: 'Runs', title: 'Regret Sweep over a Pool', run: () => openRuns() },
  ]);
}
