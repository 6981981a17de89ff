import { Fragment } from 'react';
import { controlName, splitControls } from './visibleText';

/**
 * Untrusted text with its control characters shown as marked tokens (visibleText.ts says why). The
 * tokens sit in an isolate of their own, so that no override in the text reorders what follows.
 */
export function Visible({ text }: { text: string | null | undefined }) {
  if (!text) return <>{text ?? ''}</>;
  const parts = splitControls(text);
  if (parts.length === 1) return <>{text}</>;
  return (
    <>
      {parts.map((p, i) =>
        i % 2 === 0 ? (
          <Fragment key={i}>{p}</Fragment>
        ) : (
          <span key={i} className="ctl-char" data-testid="control-char" title={`U+${p.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} (a control character, shown instead of applied)`}>
            ⟦{controlName(p)}⟧
          </span>
        ),
      )}
    </>
  );
}
