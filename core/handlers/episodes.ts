import type { CallName } from '../api';
import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';

type EpisodeCalls = Extract<CallName, `episodes.${string}`>;

export function episodesHandlers(s: Services): Pick<Handlers, EpisodeCalls> {
  const svc = () => s.episodes;
  return {
    'episodes.list': (i) => svc().list(i),
    'episodes.get': ({ id }) => svc().get(id),
    'episodes.inspect': ({ id, idx }) => svc().inspect(id, idx),
    'episodes.open': (i) => svc().open(i),
    'episodes.act': ({ id, action, extract }) => svc().act(id, action, extract),
    'episodes.resetAgain': ({ id, seed }) => svc().resetAgain(id, seed),
    'episodes.run': ({ id, policy, until, maxSteps }) => svc().run(id, policy, until, maxSteps),
    'episodes.scrub': ({ id, idx }) => svc().scrub(id, idx),
    'episodes.close': async ({ id }) => ({ closed: await svc().close(id) }),
    'episodes.delete': async ({ ids }) => ({ deleted: await svc().delete(ids) }),
    'episodes.replay': ({ id, runtime }) => svc().replay(id, { runtime }),
    'episodes.importTrajectory': (i) => svc().importTrajectories(i),
    'episodes.exportJsonl': ({ ids }) => svc().exportJsonl(ids),
    'episodes.importJsonl': ({ text }) => svc().importJsonl(text),
    'episodes.regret': (i) => svc().regret(i),
    'episodes.regretCancel': ({ runId }) => ({ cancelled: svc().regretCancel(runId) }),
    'episodes.openCancel': ({ requestId }) => ({ cancelled: svc().openCancel(requestId) }),
  };
}
