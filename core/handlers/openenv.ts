import type { CallName } from '../api';
import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';
import { describeGames } from '../openenv/remotePlays';

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
    // Every audit the app runs is kept (the store drops the URL's token); listed per URL below.
    'openenv.remote.audit': async (i) => {
      const v = await s.openenvRemote.audit(i.id);
      if (v.audit) s.wireAudits.add(v.audit, 'app');
      return v;
    },
    'openenv.remote.audits': ({ url, limit }) => ({ url, audits: s.wireAudits.list(url, limit) }),
    'openenv.remote.play': (i) => s.openenvPlays.play(i),
    'openenv.remote.describe': ({ url }) => describeGames(url),
    'openenv.remote.show': (i) => s.openenvRemote.show(i.id),
    'openenv.remote.close': async (i) => ({ closed: await s.openenvRemote.close(i.id) }),
  };
}
