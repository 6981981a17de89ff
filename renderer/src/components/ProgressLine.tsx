import { useEffect, useState } from 'react';
import { seconds } from './progressText';

export { remaining, seconds } from './progressText';

/** The clock a progress line reads: ticks while `active`, so "elapsed" and "left" move between events. */
export function useNow(active: boolean, everyMs = 500): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const t = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(t);
  }, [active, everyMs]);
  return now;
}

/**
 * Every wait longer than a second looks like this: what is happening, a bar (done of total, or the
 * time spent against the limit, or moving when neither is known), the time spent, and Cancel.
 */
export function ProgressLine(props: {
  label: string;
  /** Client time the work started (ms): the elapsed time counts from it. */
  startedAt: number;
  done?: number | undefined;
  total?: number | undefined;
  /** The work is stopped after this many seconds: the bar fills toward it and the line says so. */
  limitSec?: number | null | undefined;
  /** Text after the elapsed time: "about 20 s left", "check 4 of 17". */
  detail?: string | undefined;
  onCancel?: (() => void) | undefined;
  cancelling?: boolean;
  testId?: string;
}) {
  const now = useNow(true);
  const elapsed = (now - props.startedAt) / 1000;
  const byCount = props.total !== undefined && props.total > 0 && props.done !== undefined;
  const fraction = byCount ? props.done! / props.total! : props.limitSec ? Math.min(1, elapsed / props.limitSec) : null;
  return (
    <div className="progress-line" data-testid={props.testId} role="status" aria-live="polite">
      <div className={`progress-bar ${fraction === null ? 'indeterminate' : ''}`} role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={fraction === null ? undefined : Math.round(fraction * 100)}>
        <div style={{ width: fraction === null ? '40%' : `${Math.max(2, fraction * 100)}%` }} />
      </div>
      <span className="progress-text">
        <strong>{props.label}</strong>
        {byCount ? ` · ${props.done} / ${props.total}` : ''} · {seconds(elapsed)}
        {props.limitSec ? ` of at most ${seconds(props.limitSec)}` : ''}
        {props.detail ? ` · ${props.detail}` : ''}
      </span>
      {props.onCancel ? (
        <button onClick={props.onCancel} disabled={props.cancelling} data-testid={props.testId ? `${props.testId}-cancel` : undefined}>
          {props.cancelling ? 'Cancelling…' : 'Cancel'}
        </button>
      ) : null}
    </div>
  );
}
