import { useEffect, useRef, useState } from 'react';
import type { RuntimeStatus } from '../../../../core/api';
import { backend, useApp } from '../../store/app';
import { attempt } from '../../store/report';

const POLL_MS = 3000;
/** While the interpreters load (a cold start takes seconds), the item counts them up this often. */
const STARTING_POLL_MS = 500;

/** The interpreter pool in the status bar: ready / busy / restarted, and the native runtime's caveat. */
export function RuntimeStatusItem() {
  const connection = useApp((s) => s.connection);
  const refresh = useRef<() => Promise<void>>(async () => {});
  const [status, setStatus] = useState<RuntimeStatus | null>(null);
  const [cancelling, setCancelling] = useState(false);
  const starting = status?.pool.startingSec != null;

  useEffect(() => {
    if (connection !== 'connected') return;
    let alive = true;
    const poll = async () => {
      // A status bar poll stays quiet: the item just goes away while the engine cannot say.
      const st = await attempt('runtime', 'Runtime status', () => backend().call('runtime.status', {}), { quiet: 'none' });
      if (alive) setStatus(st ?? null);
    };
    refresh.current = poll;
    void poll();
    const timer = setInterval(() => void poll(), starting ? STARTING_POLL_MS : POLL_MS);
    return () => {
      alive = false;
      clearInterval(timer);
    };
  }, [connection, starting]);

  if (!status) return null;
  const p = status.pool;
  const n = status.native;
  const text = !p.started
    ? 'Pyodide: idle'
    : p.startingSec !== null
      ? `Pyodide starting… ${Math.floor(p.startingSec)} s${p.coldMs ? '' : ' (first start: about 10 s)'}`
      : `Pyodide ${p.ready} ready · ${p.busy} busy${p.starting ? ` · ${p.starting} starting` : ''}${p.restarted ? ` · ${p.restarted} restarted` : ''}`;
  const dot = !p.started ? 'idle' : p.startingSec !== null ? 'busy' : p.ready + p.busy === 0 ? 'bad' : p.busy > 0 && p.ready === 0 ? 'busy' : 'ok';
  const nativeLine = n.python
    ? `Native CPython ${n.python.version}${n.python.numpy ? ' with numpy' : ''} (${n.python.path}): LESS ISOLATED than Pyodide. Network: ${n.isolation.networkDetail}. Limits: ${n.isolation.limits.join(', ') || 'none'}.`
    : 'Native CPython: not found (set SPADE_PYTHON); numpy games cannot run.';
  const title = [
    `Sandboxed Pyodide pool: ${p.size} interpreter${p.size === 1 ? '' : 's'}${p.python ? `, Python ${p.python}` : ''}${p.coldMs ? `, cold start ${Math.round(p.coldMs)} ms` : ''}.`,
    `${status.sessions} open session${status.sessions === 1 ? '' : 's'}.`,
    p.restarted ? `Restarted ${p.restarted}× (last: ${p.lastRestartReason ?? 'unknown'}).` : '',
    nativeLine,
  ]
    .filter(Boolean)
    .join('\n');
  return (
    <span className="status-item runtime-status" data-testid="runtime-status" title={title}>
      <span className={`dot ${dot}`} /> {text}
      {p.startingSec !== null ? <span className="runtime-starting-bar" data-testid="runtime-starting" role="progressbar" aria-label="Pyodide starting" /> : null}
      {p.startingSec !== null ? (
        <button
          className="runtime-start-cancel"
          data-testid="runtime-start-cancel"
          disabled={cancelling}
          title="Stop starting the sandboxed interpreters; they start again when next needed"
          onClick={() => {
            setCancelling(true);
            void attempt('runtime', 'Cancel the start', () => backend().call('runtime.cancelStart', {}))
              .then(() => refresh.current())
              .finally(() => setCancelling(false));
          }}
        >
          {cancelling ? 'Cancelling…' : 'Cancel'}
        </button>
      ) : null}
      {n.sessions > 0 ? (
        <span className="runtime-native-warning" data-testid="runtime-native-warning">
          {' '}
          · native {n.sessions} (less isolated)
        </span>
      ) : null}
    </span>
  );
}
