import type { CallName } from '../api';
import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';

type OpenEnvCalls = Extract<CallName, `openenv.${string}`>;

export function openenvHandlers(s: Services): Pick<Handlers, OpenEnvCalls> {
  return {
    'openenv.status': () => s.openenv.status(),
    'openenv.start': (i) => s.openenv.start(i),
    'openenv.stop': () => s.openenv.stop(),
    'openenv.remote.open': (i) => s.openenvRemote.open(i.url, i.seed, i.hint),
    'openenv.remote.step': (i) => s.openenvRemote.step(i.id, i.text),
    'openenv.remote.reset': (i) => s.openenvRemote.reset(i.id, i.seed),
    'openenv.remote.replay': (i) => s.openenvRemote.replay(i.id),
    'openenv.remote.audit': (i) => s.openenvRemote.audit(i.id),
    'openenv.remote.show': (i) => s.openenvRemote.show(i.id),
    'openenv.remote.close': async (i) => ({ closed: await s.openenvRemote.close(i.id) }),
  };
}
