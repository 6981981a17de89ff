import { useApp } from '../store/app';
import { useCommands } from '../store/commands';
import type { ViewProps } from './registry';

export function WelcomeView(_props: ViewProps<'welcome'>) {
  const info = useApp((s) => s.info);
  const openPalette = useCommands((s) => s.openPalette);
  return (
    <div className="welcome">
      <h1>SPADE Workbench</h1>
      <p className="muted">
        Keep, inspect, run, audit and replay the Python training environments that SPADE's designer writes,
        and follow the training runs that produce them.
      </p>
      <div className="welcome-grid">
        <section>
          <h2>Start</h2>
          <ul>
            <li>Browse the environment memory in the <b>Library</b> on the left.</li>
            <li>
              Press <kbd>Ctrl</kbd>+<kbd>Shift</kbd>+<kbd>P</kbd> for every command{' '}
              <button className="link" onClick={() => openPalette('commands')}>
                (open the palette)
              </button>
              .
            </li>
          </ul>
        </section>
        <section>
          <h2>This workbench</h2>
          <dl className="kv">
            <dt>Version</dt>
            <dd>{info?.version ?? '…'}</dd>
            <dt>Shell</dt>
            <dd>{info?.shell ?? '…'}</dd>
            <dt>Data</dt>
            <dd className="mono">{info?.dataDir ?? '…'}</dd>
          </dl>
        </section>
      </div>
    </div>
  );
}
