import { useWorkbench } from '../../store/workbench';

export function openEnvironment(id: number, name: string): void {
  useWorkbench.getState().openTab({ id: `env:${id}`, kind: 'environment', title: name, params: { id: String(id) } });
}
