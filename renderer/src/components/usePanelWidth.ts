import { useCallback, useEffect, useState, type KeyboardEvent, type PointerEvent } from 'react';

const KEY = 'spade.sidePanelWidth';
/** Narrower than this, names and the library's columns stop being readable. */
export const SIDE_MIN = 240;
/** The main area keeps at least this much of the window. */
const MAIN_MIN = 420;
const ACTIVITY_BAR = 56;

function clampWidth(w: number): number {
  const max = Math.max(SIDE_MIN, window.innerWidth - ACTIVITY_BAR - MAIN_MIN);
  return Math.round(Math.min(max, Math.max(SIDE_MIN, w)));
}

function saved(): number | null {
  const v = Number(localStorage.getItem(KEY));
  return Number.isFinite(v) && v > 0 ? clampWidth(v) : null;
}

/**
 * The side panel's width: dragged with the handle on its edge (or arrow keys on it), kept in
 * localStorage, never below SIDE_MIN nor so wide that the main area goes under MAIN_MIN.
 * Null until the user resizes: the stylesheet's default (a share of the window) applies.
 */
export function usePanelWidth() {
  const [width, setWidth] = useState<number | null>(saved);

  const commit = useCallback((w: number) => {
    const c = clampWidth(w);
    setWidth(c);
    localStorage.setItem(KEY, String(c));
  }, []);

  // A smaller window must not leave the main area squeezed by a width chosen on a larger one.
  useEffect(() => {
    const onResize = () => setWidth((w) => (w === null ? w : clampWidth(w)));
    window.addEventListener('resize', onResize);
    return () => window.removeEventListener('resize', onResize);
  }, []);

  const onPointerDown = (e: PointerEvent<HTMLDivElement>) => {
    e.preventDefault();
    const panel = e.currentTarget.parentElement!;
    const left = panel.getBoundingClientRect().left;
    const target = e.currentTarget;
    target.setPointerCapture(e.pointerId);
    document.body.classList.add('resizing');
    const move = (ev: globalThis.PointerEvent) => commit(ev.clientX - left);
    const up = () => {
      target.removeEventListener('pointermove', move);
      target.removeEventListener('pointerup', up);
      target.removeEventListener('pointercancel', up);
      document.body.classList.remove('resizing');
    };
    target.addEventListener('pointermove', move);
    target.addEventListener('pointerup', up);
    target.addEventListener('pointercancel', up);
  };
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
    e.preventDefault();
    const now = e.currentTarget.parentElement!.getBoundingClientRect().width;
    commit(now + (e.key === 'ArrowRight' ? 16 : -16));
  };
  const onDoubleClick = () => {
    localStorage.removeItem(KEY);
    setWidth(null);
  };
  return { width, handle: { onPointerDown, onKeyDown, onDoubleClick, title: 'Drag to resize; double-click for the default width' } };
}
