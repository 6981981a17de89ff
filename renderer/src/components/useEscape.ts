import { useEffect, useRef } from 'react';

/**
 * Esc closes the topmost open dialog, and only it: every dialog registers here while it is open,
 * so a dialog opened from another (a host-key prompt over the launch form) closes first. One
 * handler for all of them, in the capture phase, so an input or Monaco with focus cannot keep it.
 */
const stack: { close: () => void }[] = [];
let installed = false;

function onKey(e: KeyboardEvent): void {
  if (e.key !== 'Escape' || e.defaultPrevented) return;
  const top = stack.at(-1);
  if (!top) return;
  e.preventDefault();
  e.stopPropagation();
  top.close();
}

/** While mounted (and `enabled`), Esc calls `onClose`; the latest onClose is used, no re-registering. */
export function useEscape(onClose: () => void, enabled = true): void {
  const latest = useRef(onClose);
  latest.current = onClose;
  useEffect(() => {
    if (!enabled) return;
    if (!installed) {
      window.addEventListener('keydown', onKey, true);
      installed = true;
    }
    const entry = { close: () => latest.current() };
    stack.push(entry);
    return () => {
      const i = stack.indexOf(entry);
      if (i >= 0) stack.splice(i, 1);
    };
  }, [enabled]);
}
