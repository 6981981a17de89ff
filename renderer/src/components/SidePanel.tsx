import { useWorkbench } from '../store/workbench';
import { sidePanelFor } from '../views/sidePanels';
import { usePanelWidth } from './usePanelWidth';

const titles = { library: 'Library', episodes: 'Episodes', jobs: 'Jobs' } as const;

export function SidePanel() {
  const activity = useWorkbench((s) => s.activity);
  const Panel = sidePanelFor(activity);
  const { width, handle } = usePanelWidth();
  return (
    <aside className="side-panel" aria-label={titles[activity]} style={width ? { width } : undefined} data-testid="side-panel">
      <header className="panel-title">{titles[activity]}</header>
      <div className="side-body">{Panel ? <Panel /> : <p className="pad muted">Nothing here yet in this build.</p>}</div>
      <div className="side-resizer" role="separator" aria-orientation="vertical" aria-label="Resize the side panel" tabIndex={0} data-testid="side-resizer" {...handle} />
    </aside>
  );
}
