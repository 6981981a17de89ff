import { useRef, useState } from 'react';
import { backend } from '../../store/app';
import { attempt, isCancelled } from '../../store/report';

export interface Opening {
  label: string;
  startedAt: number;
  detail?: string;
  cancelling: boolean;
}

let nextOpen = 1;

/**
 * An episode open a person can cancel: each open carries a request id of its own, so Cancel
 * (episodes.openCancel) stops exactly that open in the engine, wherever it waits: Pyodide's cold
 * start, the load, the first reset. `run` gets an `open` function that tags its calls.
 */
export function useOpening() {
  const [opening, setOpening] = useState<Opening | null>(null);
  const current = useRef<string | null>(null);
  const cancelled = useRef(false);

  async function run(label: string, fn: (requestId: () => string) => Promise<void>): Promise<'done' | 'cancelled'> {
    cancelled.current = false;
    setOpening({ label, startedAt: Date.now(), cancelling: false });
    // Whether the wait is Pyodide's first start, said in the line (the status bar says it too).
    // Only a detail of the line: unknown, the line says less.
    void attempt('episodes', 'Runtime status', () => backend().call('runtime.status', {}), { quiet: 'debug' }).then((st) => {
      if (st && (!st.pool.started || st.pool.startingSec !== null)) setOpening((o) => (o ? { ...o, detail: st.pool.coldMs ? 'the sandboxed interpreter is starting' : 'the sandboxed interpreter is starting (first start: about 10 s)' } : o));
    });
    try {
      await fn(() => {
        if (cancelled.current) throw new CancelledOpen();
        current.current = `open-${Date.now().toString(36)}-${nextOpen++}`;
        return current.current;
      });
      return 'done';
    } catch (e) {
      // Not an error: the caller's guard (useCall) shows anything else.
      if (cancelled.current || e instanceof CancelledOpen || isCancelled(e)) return 'cancelled';
      throw e;
    } finally {
      current.current = null;
      setOpening(null);
    }
  }

  function cancel(): void {
    cancelled.current = true;
    setOpening((o) => (o ? { ...o, cancelling: true } : o));
    const id = current.current;
    // The open it meant to stop ends (or fails) and says so itself.
    if (id) void attempt('episodes', 'Cancel the open', () => backend().call('episodes.openCancel', { requestId: id }), { quiet: 'warn' });
  }

  return { opening, run, cancel };
}

class CancelledOpen extends Error {
  constructor() {
    super('cancelled');
  }
}
