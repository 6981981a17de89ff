import { useState } from 'react';
import { errorMessage } from '../../../core/api';
import { backend, refreshHealth, useApp } from '../store/app';

/** Shown only when the database file failed its integrity check; the user decides what happens next. */
export function DatabaseBanner() {
  const db = useApp((s) => s.health?.database);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (!db || db.integrity.ok) return null;
  const act = async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      await refreshHealth();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="db-banner" role="alert" data-testid="database-banner">
      <strong>The library database is damaged.</strong> The {db.integrity.checked} check found {db.integrity.truncated ? 'at least ' : ''}{db.integrity.problems.length} problem(s)
      {db.integrity.problems[0] ? <span className="mono"> ({db.integrity.problems[0]})</span> : null}.{' '}
      {db.writesPaused ? 'Changes are paused: you can still browse and export.' : 'You chose to keep writing.'}
      <span className="db-banner-actions">
        <button disabled={busy} onClick={() => void act(() => backend().call('app.checkDatabase', { full: true }))}>
          Check fully
        </button>
        {db.writesPaused ? (
          <button disabled={busy} onClick={() => void act(() => backend().call('app.resumeWrites', { confirm: true }))}>
            Keep writing anyway
          </button>
        ) : null}
      </span>
      {error ? <span className="error"> {error}</span> : null}
    </div>
  );
}
