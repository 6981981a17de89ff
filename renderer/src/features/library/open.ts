import { useWorkbench } from '../../store/workbench';

export function openEnvironment(id: number, name: string): void {
  useWorkbench.getState().openTab({ kind: 'environment', envId: id }, name);
}
