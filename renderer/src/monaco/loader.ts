import type { Monaco } from './setup';

let loading: Promise<Monaco> | null = null;

/** Monaco is large: load it on first use so the shell paints without waiting for it. */
export function loadMonaco(): Promise<Monaco> {
  loading ??= import('./setup').then((m) => m.monaco);
  return loading;
}
