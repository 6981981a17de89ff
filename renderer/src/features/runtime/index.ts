import './runtime.css';
import { registerStatusItem } from '../../views/sidePanels';
import { RuntimeStatusItem } from './RuntimeStatusItem';
import { followBackgroundWork } from './followWork';

export function registerRuntimeFeature(): void {
  registerStatusItem(RuntimeStatusItem, { replaces: 'runtime' });
  followBackgroundWork();
}
