import { callNames, eventNames } from './index';

/** Re-exported on their own so the preload's allowlist is visibly just these two lists. */
export { callNames, eventNames };
