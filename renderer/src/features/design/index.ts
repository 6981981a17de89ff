import './design.css';
import { useCommands } from '../../store/commands';
import { lazyView, registerView } from '../../views/registry';
import { registerEnvAction } from '../../views/envActions';
import { openDesign, openVariants } from './open';

export function registerDesignFeature(): void {
  registerView('design', lazyView(() => import('./DesignView').then((m) => m.DesignView)));
  useCommands.getState().register([{ id: 'design.show', category: 'Design', title: 'Design Environments (a design round)', run: () => openDesign() }]);
  registerEnvAction({ id: 'variants', label: 'Make variants', run: (e) => openVariants(e.id, e.name) });
}
