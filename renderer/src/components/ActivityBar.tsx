import { useWorkbench, type Activity } from '../store/workbench';
import { useCommands } from '../store/commands';

const items: { id: Activity; label: string; glyph: string }[] = [
  { id: 'library', label: 'Library', glyph: '▤' },
  { id: 'episodes', label: 'Episodes', glyph: '▶' },
  { id: 'jobs', label: 'Jobs', glyph: '⚙' },
];

export function ActivityBar() {
  const activity = useWorkbench((s) => s.activity);
  const sideVisible = useWorkbench((s) => s.sideVisible);
  const setActivity = useWorkbench((s) => s.setActivity);
  const openTab = useWorkbench((s) => s.openTab);
  const openPalette = useCommands((s) => s.openPalette);
  return (
    <nav className="activity-bar" aria-label="Activities">
      {items.map((it) => (
        <button
          key={it.id}
          className={`activity ${activity === it.id && sideVisible ? 'active' : ''}`}
          title={it.label}
          aria-label={it.label}
          aria-pressed={activity === it.id && sideVisible}
          onClick={() => setActivity(it.id)}
        >
          <span className="glyph" aria-hidden>
            {it.glyph}
          </span>
          <span className="activity-label">{it.label}</span>
        </button>
      ))}
      <div className="spacer" />
      <button className="activity" title="Command palette (Ctrl+Shift+P)" aria-label="Command palette" onClick={() => openPalette('commands')}>
        <span className="glyph" aria-hidden>
          ⌘
        </span>
      </button>
      <button className="activity" title="Settings" aria-label="Settings" onClick={() => openTab({ kind: 'settings' }, 'Settings')}>
        <span className="glyph" aria-hidden>
          ☰
        </span>
      </button>
    </nav>
  );
}
