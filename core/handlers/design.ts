import type { CallName } from '../api';
import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';

type DesignCalls = Extract<CallName, `design.${string}`>;

export function designHandlers(s: Services): Pick<Handlers, DesignCalls> {
  return {
    'design.preview': (i) => s.design.preview(i),
    'design.start': (i) => s.design.start(i),
    'design.cancel': ({ id }) => s.design.cancel(id),
    'design.list': ({ limit }) => s.design.list(limit),
    'design.get': ({ id }) => s.design.get(id),
  };
}
