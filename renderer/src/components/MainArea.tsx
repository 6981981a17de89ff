import { Suspense, useEffect, useRef } from 'react';
import { useWorkbench, type Tab } from '../store/workbench';
import { viewFor } from '../views/registry';
import { Visible } from './Visible';
import { visibleText } from './visibleText';

const KIND_LABEL: Record<string, string> = { editor: 'editor', environment: 'library', audit: 'audit', 'write-back': 'write back', 'editor-diff': 'diff', episode: 'episode' };

/** Tabs with the same title (an environment open in the library and in the editor) say which is which. */
function kindHints(tabs: Tab[]): Map<string, string> {
  const byTitle = new Map<string, Tab[]>();
  for (const t of tabs) byTitle.set(t.title, [...(byTitle.get(t.title) ?? []), t]);
  const out = new Map<string, string>();
  for (const same of byTitle.values()) if (same.length > 1) for (const t of same) out.set(t.id, KIND_LABEL[t.target.kind] ?? t.target.kind);
  return out;
}

export function MainArea() {
  const tabs = useWorkbench((s) => s.tabs);
  const active = useWorkbench((s) => s.activeTabId);
  const activate = useWorkbench((s) => s.activateTab);
  const close = useWorkbench((s) => s.closeTab);
  const bar = useRef<HTMLDivElement>(null);
  // The active tab is always scrolled into view (a newly opened one landed off the right edge).
  useEffect(() => {
    const show = () => bar.current?.querySelector('.tab.active')?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    show();
    // A smaller window must not leave the active tab beyond the right edge either.
    window.addEventListener('resize', show);
    return () => window.removeEventListener('resize', show);
  }, [active, tabs.length]);
  const hints = kindHints(tabs);
  return (
    <main className="main-area">
      <div className="tab-bar" role="tablist" ref={bar}>
        {tabs.map((t) => (
          <div
            key={t.id}
            data-tab-id={t.id}
            role="tab"
            aria-selected={t.id === active}
            className={`tab ${t.id === active ? 'active' : ''}`}
            onClick={() => activate(t.id)}
            onAuxClick={(e) => e.button === 1 && close(t.id)}
            title={visibleText(t.title)}
          >
            <span className="tab-title">
              <Visible text={t.title} />
            </span>
            {hints.has(t.id) ? <span className="tab-kind">· {hints.get(t.id)}</span> : null}
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
          const View = viewFor(t.target.kind);
          // Inactive tabs stay mounted (hidden) so editors keep their undo stacks and scroll positions.
          return (
            <div key={t.id} className="tab-pane" hidden={t.id !== active} role="tabpanel">
              {View ? (
                <Suspense fallback={<p className="pad muted">Loading…</p>}>
                  <View tab={t} active={t.id === active} />
                </Suspense>
              ) : (
                <p className="pad">Unknown view: {t.target.kind}</p>
              )}
            </div>
          );
        })}
      </div>
    </main>
  );
}
