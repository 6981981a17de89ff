import { backend, refreshHealth, useApp } from '../store/app';
import { useCall } from '../store/useCall';

/** Shown only when the database file failed its integrity check; the user decides what happens next. */
export function DatabaseBanner() {
  const db = useApp((s) => s.health?.database);
  const call = useCall('database');
  const busy = call.busy !== null;
  const error = call.error;
  if (!db || db.integrity.ok) return null;
  const act = (label: string, fn: () => Promise<unknown>) =>
    call.run(label, async () => {
      await fn();
      await refreshHealth();
    });
  return (
    <div className="db-banner" role="alert" data-testid="database-banner">
      <strong>The library database is damaged.</strong> The {db.integrity.checked} check found {db.integrity.truncated ? 'at least ' : ''}{db.integrity.problems.length} problem(s)
      {db.integrity.problems[0] ? <span className="mono"> ({db.integrity.problems[0]})</span> : null}.{' '}
      {db.writesPaused ? 'Changes are paused: you can still browse and export.' : 'You chose to keep writing.'}
      <span className="db-banner-actions">
        <button disabled={busy} onClick={() => void act('Check the database', () => backend().call('app.checkDatabase', { full: true }))}>
          Check fully
        </button>
        {db.writesPaused ? (
          <button disabled={busy} onClick={() => void act('Resume writes', () => backend().call('app.resumeWrites', { confirm: true }))}>
            Keep writing anyway
          </button>
        ) : null}
      </span>
      {error ? <span className="error"> {error}</span> : null}
    </div>
  );
}
