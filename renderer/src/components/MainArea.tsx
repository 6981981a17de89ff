import { useWorkbench } from '../store/workbench';
import { viewFor } from '../views/registry';

export function MainArea() {
  const tabs = useWorkbench((s) => s.tabs);
  const active = useWorkbench((s) => s.activeTabId);
  const activate = useWorkbench((s) => s.activateTab);
  const close = useWorkbench((s) => s.closeTab);
  return (
    <main className="main-area">
      <div className="tab-bar" role="tablist">
        {tabs.map((t) => (
          <div
            key={t.id}
            role="tab"
            aria-selected={t.id === active}
            className={`tab ${t.id === active ? 'active' : ''}`}
            onClick={() => activate(t.id)}
            onAuxClick={(e) => e.button === 1 && close(t.id)}
            title={t.title}
          >
            <span className="tab-title">{t.title}</span>
            {t.dirty ? <span className="dirty-dot" aria-label="unsaved" title="Unsaved changes">●</span> : null}
            <button
              className="tab-close"
              aria-label={`Close ${t.title}`}
              onClick={(e) => {
                e.stopPropagation();
                close(t.id);
              }}
            >
              ×
            </button>
          </div>
        ))}
      </div>
      <div className="tab-content">
        {tabs.length === 0 ? <div className="empty-main muted">Open something from the Library, or press Ctrl+Shift+P.</div> : null}
        {tabs.map((t) => {
          const View = viewFor(t.kind);
          // Inactive tabs stay mounted (hidden) so editors keep their undo stacks and scroll positions.
          return (
            <div key={t.id} className="tab-pane" hidden={t.id !== active} role="tabpanel">
              {View ? <View tab={t} active={t.id === active} /> : <p className="pad">Unknown view: {t.kind}</p>}
            </div>
          );
        })}
      </div>
    </main>
  );
}
