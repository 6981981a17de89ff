import { useNotice } from '../store/report';
import { useWorkbench } from '../store/workbench';

/** The last failed action (store/report.ts), in the status bar until dismissed; click for the Logs. */
export function ErrorNotice() {
  const notice = useNotice((s) => s.notice);
  const dismiss = useNotice((s) => s.dismiss);
  if (!notice) return null;
  return (
    <span className="status-item status-error" role="alert" data-testid="error-notice">
      <button className="status-error-text" title={`${notice.text}\n(open the Logs panel)`} onClick={() => useWorkbench.getState().showBottom('logs')}>
        ⚠ {notice.text}
      </button>
      <button className="status-error-dismiss" aria-label="Dismiss the error" onClick={dismiss}>
        ×
      </button>
    </span>
  );
}
