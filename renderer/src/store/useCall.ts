import { useCallback, useState } from 'react';
import { log } from './app';
import { errorMessage } from '../../../core/api';

/**
 * The busy / error / try-catch block every view had its own copy of: `run(label, fn)` marks the
 * view busy with `label`, keeps the error message to show (and logs it), and resolves to fn's
 * value or undefined when it failed. `setError` shows a message of the view's own (a validation
 * failure, a side action that failed) in the same place.
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
        const m = errorMessage(e);
        setError(m);
        log('error', source, `${label}: ${m}`);
        return undefined;
      } finally {
        setBusy(null);
      }
    },
    [source],
  );
  return { busy, error, run, setError, clearError: () => setError(null) };
}
