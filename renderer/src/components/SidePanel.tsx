import { useWorkbench } from '../store/workbench';
import { sidePanelFor } from '../views/sidePanels';

const titles = { library: 'Library', episodes: 'Episodes', jobs: 'Jobs' } as const;

export function SidePanel() {
  const activity = useWorkbench((s) => s.activity);
  const Panel = sidePanelFor(activity);
  return (
    <aside className="side-panel" aria-label={titles[activity]}>
      <header className="panel-title">{titles[activity]}</header>
      <div className="side-body">{Panel ? <Panel /> : <p className="pad muted">Nothing here yet in this build.</p>}</div>
    </aside>
  );
}
