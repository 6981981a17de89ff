import { useMemo } from 'react';
import { useApp, type Problem } from '../store/app';
import { tabId, useWorkbench } from '../store/workbench';

export function BottomPanel() {
  const tab = useWorkbench((s) => s.bottomTab);
  const show = useWorkbench((s) => s.showBottom);
  const toggle = useWorkbench((s) => s.toggleBottom);
  const byOwner = useApp((s) => s.problems);
  const problems = useMemo(() => Object.values(byOwner).flat(), [byOwner]);
  const logs = useApp((s) => s.logs);
  const openTab = useWorkbench((s) => s.openTab);
  const revealLine = useWorkbench((s) => s.revealLine);
  const goTo = (target: NonNullable<Problem['target']>, title: string) => {
    openTab(target.tab, target.title ?? title);
    if (target.line) revealLine(tabId(target.tab), target.line);
  };
  return (
    <section className="bottom-panel" aria-label="Panel">
      <div className="bottom-tabs">
        <button className={tab === 'problems' ? 'active' : ''} onClick={() => show('problems')}>
          Problems <span className="badge">{problems.length}</span>
        </button>
        <button className={tab === 'logs' ? 'active' : ''} onClick={() => show('logs')}>
          Logs
        </button>
        <div className="spacer" />
        <button aria-label="Hide panel" title="Hide panel (Ctrl+J)" onClick={toggle}>
          ×
        </button>
      </div>
      <div className="bottom-body" data-testid={`bottom-${tab}`}>
        {tab === 'problems' ? (
          problems.length === 0 ? (
            <p className="muted pad-s">No problems found.</p>
          ) : (
            <ul className="problem-list">
              {problems.map((p) => (
                <li
                  key={p.id}
                  className={`sev-${p.severity}`}
                  onClick={() => p.target && goTo(p.target, p.source)}
                >
                  <span className="sev">{p.severity === 'error' ? '⨯' : p.severity === 'warning' ? '!' : 'i'}</span> {p.message}{' '}
                  <span className="muted">{p.source}</span>
                </li>
              ))}
            </ul>
          )
        ) : (
          <pre className="log-view">
            {logs.slice(-500).map((l, i) => (
              <div key={i} className={`log-${l.level}`}>
                {l.time.slice(11, 19)} [{l.source}] {l.message}
              </div>
            ))}
          </pre>
        )}
      </div>
    </section>
  );
}
