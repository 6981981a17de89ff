import { useApp } from '../store/app';
import { isComponentReplaced, statusBarItems } from '../views/sidePanels';
import { useResolvedTheme } from '../theme';
import { ErrorNotice } from './ErrorNotice';

export function StatusBar() {
  const connection = useApp((s) => s.connection);
  const info = useApp((s) => s.info);
  const health = useApp((s) => s.health);
  const theme = useResolvedTheme();
  const items = statusBarItems();
  const label =
    connection === 'connected' ? (health?.ok === false ? 'Backend: database error' : 'Backend: connected') : connection === 'reconnecting' ? 'Backend: reconnecting…' : connection === 'closed' ? 'Backend: disconnected' : 'Backend: connecting…';
  return (
    <footer className={`status-bar ${connection !== 'connected' ? 'warn' : ''}`} data-testid="status-bar">
      <span className="status-item" data-testid="backend-status" title={health?.database.message ?? ''}>
        <span className={`dot ${connection === 'connected' ? 'ok' : 'bad'}`} /> {label}
      </span>
      {info ? <span className="status-item">{info.shell === 'electron' ? 'Desktop' : 'Web'} · v{info.version}</span> : null}
      {health
        ? health.components.filter((c) => !isComponentReplaced(c.name)).map((c) => (
            <span key={c.name} className="status-item" title={c.detail}>
              {c.name}: {c.state}
            </span>
          ))
        : null}
      {items.map((Item, i) => (
        <Item key={i} />
      ))}
      <span className="spacer" />
      <ErrorNotice />
      <span className="status-item" data-testid="theme-status">
        {theme === 'dark' ? 'Dark' : 'Light'} theme
      </span>
    </footer>
  );
}
