import { useCallback, useState } from 'react';
import { attempt, type CallOptions } from './report';

/**
 * The busy / error / try-catch block every view had its own copy of: `run(label, fn)` marks the
 * view busy with `label`, keeps the error message to show (and logs it), and resolves to fn's
 * value or undefined when it failed. `setError` shows a message of the view's own (a validation
 * failure, a side action that failed) in the same place. `opts` names the cases that are not a
 * plain failure (a Cancel, a quiet poll, a superseded ask; report.ts CallOptions). Code outside a
 * view uses attempt() (store/report.ts), which reports the same way in the status bar.
 */
export function useCall(source: string) {
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(
    async <T,>(label: string, fn: () => Promise<T>, opts: Omit<CallOptions, 'show'> = {}): Promise<T | undefined> => {
      setBusy(label);
      setError(null);
      const value = await attempt(source, label, fn, { ...opts, show: setError });
      setBusy(null);
      return value;
    },
    [source],
  );
  return { busy, error, run, setError, clearError: () => setError(null) };
}
