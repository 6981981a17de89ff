import './runtime.css';
import { registerStatusItem } from '../../views/sidePanels';
import { RuntimeStatusItem } from './RuntimeStatusItem';

export function registerRuntimeFeature(): void {
  registerStatusItem(RuntimeStatusItem, { replaces: 'runtime' });
}
