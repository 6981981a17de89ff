import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';
import { appHandlers } from './app';

/** Every call in the contract must have a handler: the type below fails to compile otherwise. */
export function createHandlers(s: Services): Handlers {
  return {
    ...appHandlers(s),
  };
}
