import { useEffect, useState, type ReactNode } from 'react';
import { attempt } from '../store/report';
import { ProgressLine } from './ProgressLine';
import { runOnText } from './RunOnPicker';

/** What every background sweep (pool audit, regret sweep) shows of itself. */
export interface SweepFacts {
  id: string;
  query: string;
  target: string;
  state: 'running' | 'elsewhere' | 'interrupted' | 'done' | 'cancelled' | 'failed';
  phase: 'submitting' | 'following' | null;
  done: number;
  total: number;
  message: string | null;
  createdAt: string;
}

const STATE_TEXT: Record<SweepFacts['state'], string> = {
  running: 'running',
  elsewhere: 'running in another process',
  interrupted: 'interrupted (the process running it stopped)',
  done: 'done',
  cancelled: 'cancelled',
  failed: 'failed',
};

/** How often a list with a sweep running in another process reads it again (that process's progress reaches no event here). */
const ELSEWHERE_POLL_MS = 1000;
/** How often an open list looks for a sweep another process has started since (the command line on this memory file). */
const NEW_ELSEWHERE_POLL_MS = 5000;

/**
 * Reads the list again while any of its sweeps runs in another process, so its count moves as rows
 * arrive; and, more slowly while the page is shown, so that a sweep started from a terminal after
 * the list was read appears without opening the page again.
 */
export function useFollowElsewhere(sweeps: readonly Pick<SweepFacts, 'state'>[], reload: () => void): void {
  const any = sweeps.some((s) => s.state === 'elsewhere');
  useEffect(() => {
    const t = setInterval(() => {
      if (any || document.visibilityState === 'visible') reload();
    }, any ? ELSEWHERE_POLL_MS : NEW_ELSEWHERE_POLL_MS);
    return () => clearInterval(t);
  }, [any, reload]);
}

/**
 * One sweep in a list: its head (query, target, state, Resume/Cancel/Results), its progress while
 * it runs or how far it got, its message, and its results when open. The pool audit and regret
 * panels give what differs: words, test ids, the calls, and the results view.
 */
export function SweepCard(p: {
  s: SweepFacts;
  heardAt: number;
  open: boolean;
  onToggle(): void;
  /** Where a failed call is reported ('audit', 'runs'), and what the sweep is called in it. */
  area: string;
  noun: string;
  resume(): Promise<unknown>;
  cancel(): Promise<unknown>;
  testIds: { card: string; progress: string; summary: string; resume?: string; toggle?: string };
  /** Shown in the head after the query: what the sweep runs. */
  what?: ReactNode;
  resultsLabel: string;
  progressLabel: string;
  progressDetail: string;
  summary: string;
  results: ReactNode;
}) {
  const { s } = p;
  const [busy, setBusy] = useState(false);
  const act = (label: string, call: () => Promise<unknown>) => {
    setBusy(true);
    void attempt(p.area, label, call).then(() => setBusy(false));
  };
  const resumable = s.state === 'interrupted' || s.state === 'cancelled' || s.state === 'failed';
  const cancel = () => act(`Cancel the ${p.noun}`, p.cancel);
  return (
    <li className={`sweep sweep-${s.state}`} data-testid={p.testIds.card} data-sweep={s.id} data-state={s.state}>
      <div className="sweep-head">
        <code>{s.query || 'every environment'}</code>
        {p.what}
        <span>on {runOnText(s.target)}</span>
        <span className={`sweep-state ${s.state}`}>{STATE_TEXT[s.state]}</span>
        <span className="muted">{new Date(s.createdAt).toLocaleString()}</span>
        {resumable && (
          <button disabled={busy} onClick={() => act(`Resume the ${p.noun}`, p.resume)} data-testid={p.testIds.resume}>
            Resume ({s.done}/{s.total})
          </button>
        )}
        {s.state === 'interrupted' && (
          <button disabled={busy} onClick={cancel}>
            Cancel
          </button>
        )}
        {s.done > 0 && (
          <button className="audit-link" aria-expanded={p.open} onClick={p.onToggle} data-testid={p.testIds.toggle}>
            {p.open ? 'Hide results' : p.resultsLabel}
          </button>
        )}
      </div>
      {s.state === 'elsewhere' ? (
        // Its driver is another process: no Cancel or Resume here (a second driver would count its environments twice),
        // and no clock (this app did not see it start); the count moves as its results land in the database.
        <div className="sweep-summary" data-testid={p.testIds.progress}>
          <div className="progress-bar" role="progressbar" aria-label={`${p.progressLabel} in another process`} aria-valuemin={0} aria-valuemax={s.total} aria-valuenow={s.done}>
            <div style={{ width: `${s.total ? Math.max(2, (100 * s.done) / s.total) : 0}%` }} />
          </div>
          <span>{p.summary}</span>
        </div>
      ) : s.state === 'running' ? (
        <ProgressLine
          testId={p.testIds.progress}
          label={s.phase === 'submitting' && s.target !== 'local' ? 'Submitting' : p.progressLabel}
          startedAt={p.heardAt}
          done={s.done}
          total={s.total}
          detail={p.progressDetail}
          cancelling={busy}
          onCancel={cancel}
        />
      ) : (
        <div className="sweep-summary" data-testid={p.testIds.summary}>
          <div className="progress-bar" role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={s.total ? Math.round((100 * s.done) / s.total) : 100}>
            <div style={{ width: `${s.total ? Math.max(2, (100 * s.done) / s.total) : 100}%` }} />
          </div>
          <span>{p.summary}</span>
        </div>
      )}
      {s.message && <p className={s.state === 'failed' ? 'audit-error' : 'muted'}>{s.message}</p>}
      {p.open && s.done > 0 && p.results}
    </li>
  );
}
