import { useWorkbench } from '../../store/workbench';

/** An environment another OpenEnv server serves, by its URL (one such page; opening it again retargets it). */
export function openOpenEnvUrl(url = ''): void {
  if (url) useWorkbench.setState((s) => ({ tabs: s.tabs.map((t) => (t.id === 'openenv-remote' ? { ...t, target: { kind: 'openenv-remote', url } } : t)) }));
  useWorkbench.getState().openTab({ kind: 'openenv-remote', url }, 'OpenEnv URL');
}
