import type { ReactNode } from 'react';
import { useEscape } from './useEscape';

/**
 * The frame of every modal in the workbench: a backdrop, a labelled dialog, and Esc (or a click on
 * the backdrop) doing what the dialog's own Close/Cancel does. `closable: false` while work that
 * Close would abandon runs (the buttons are disabled then too).
 */
export function Dialog(props: { title: string; onClose: () => void; closable?: boolean; className?: string; testId?: string; children: ReactNode }) {
  const closable = props.closable ?? true;
  useEscape(props.onClose, closable);
  return (
    <div className="modal-backdrop" role="presentation" onMouseDown={(e) => e.target === e.currentTarget && closable && props.onClose()}>
      <div className={`modal ${props.className ?? ''}`} role="dialog" aria-modal="true" aria-label={props.title} data-testid={props.testId}>
        {props.children}
      </div>
    </div>
  );
}
