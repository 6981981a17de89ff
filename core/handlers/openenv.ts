import type { CallName } from '../api';
import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';

type OpenEnvCalls = Extract<CallName, `openenv.${string}`>;

export function openenvHandlers(s: Services): Pick<Handlers, OpenEnvCalls> {
  return {
    'openenv.status': () => s.openenv.status(),
    'openenv.start': (i) => s.openenv.start(i),
    'openenv.stop': () => s.openenv.stop(),
  };
}
