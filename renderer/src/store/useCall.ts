import { useCallback, useState } from 'react';
import { logFailure } from './report';

/**
 * The busy / error / try-catch block every view had its own copy of: `run(label, fn)` marks the
 * view busy with `label`, keeps the error message to show (and logs it), and resolves to fn's
 * value or undefined when it failed. `setError` shows a message of the view's own (a validation
 * failure, a side action that failed) in the same place. Code outside a view uses attempt()
 * (store/report.ts), which reports the same way in the status bar.
 */
export function useCall(source: string) {
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(
    async <T,>(label: string, fn: () => Promise<T>): Promise<T | undefined> => {
      setBusy(label);
      setError(null);
      try {
        return await fn();
      } catch (e) {
        setError(logFailure(source, label, e));
        return undefined;
      } finally {
        setBusy(null);
      }
    },
    [source],
  );
  return { busy, error, run, setError, clearError: () => setError(null) };
}
