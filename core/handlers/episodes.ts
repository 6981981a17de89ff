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
    'episodes.openRemote': (i) => svc().openRemote(i),
    'episodes.act': ({ id, action, extract, requestId }) => svc().act(id, action, extract, undefined, requestId),
    'episodes.resetAgain': ({ id, seed, requestId }) => svc().resetAgain(id, seed, requestId),
    'episodes.run': ({ id, policy, until, maxSteps, requestId }) => svc().run(id, policy, until, maxSteps, requestId),
    'episodes.scrub': ({ id, idx, requestId }) => svc().scrub(id, idx, requestId),
    'episodes.close': async ({ id }) => ({ closed: await svc().close(id) }),
    'episodes.delete': async ({ ids }) => ({ deleted: await svc().delete(ids) }),
    'episodes.replay': ({ id, runtime, requestId }) => svc().replay(id, { runtime, requestId }),
    'episodes.importTrajectory': (i) => svc().importTrajectories(i),
    'episodes.exportJsonl': ({ ids }) => svc().exportJsonl(ids),
    'episodes.importJsonl': ({ text }) => svc().importJsonl(text),
    'episodes.regret': (i) => svc().regret(i),
    // One Cancel for every model run (the Runs page's): a regret run, or a model's play of an OpenEnv server.
    'episodes.regretCancel': ({ runId }) => ({ cancelled: svc().regretCancel(runId) || s.openenvPlays.cancel(runId) }),
    'episodes.openCancel': ({ requestId }) => ({ cancelled: svc().openCancel(requestId) }),
    'episodes.cancel': ({ requestId }) => ({ cancelled: svc().cancel(requestId) }),
  };
}
