import type { Backend } from '../api';
import { ApiError, parseEvent } from '../api';
import type { Dispatch } from './dispatcher';
import type { EventBus } from './events';

/**
 * The in-process transport. Values are passed through JSON both ways so a handler that returns
 * something the wire would mangle (a Date, a Map, undefined in an array) fails here too.
 */
export function createInProcessBackend(dispatch: Dispatch, events: EventBus): Backend {
  const listeners = new Map<string, Set<(p: unknown) => void>>();
  const unsubscribe = events.subscribe((name, payload) => {
    const set = listeners.get(name);
    if (!set) return;
    const parsed = parseEvent(name, JSON.parse(JSON.stringify(payload)) as unknown);
    if (parsed.ok) set.forEach((l) => l(parsed.payload));
  });
  return {
    transport: 'in-process',
    async call(name, input) {
      const wireInput = input === undefined ? undefined : (JSON.parse(JSON.stringify(input)) as unknown);
      try {
        const out = await dispatch(name, wireInput, { transport: 'in-process' });
        return (out === undefined ? undefined : JSON.parse(JSON.stringify(out))) as never;
      } catch (e) {
        if (e instanceof ApiError) throw ApiError.from(e.toJSON());
        throw e;
      }
    },
    on(event, listener) {
      const set = listeners.get(event) ?? new Set();
      listeners.set(event, set);
      const l = listener as (p: unknown) => void;
      set.add(l);
      return () => set.delete(l);
    },
    onConnection() {
      return () => {};
    },
    close() {
      unsubscribe();
    },
  };
}
