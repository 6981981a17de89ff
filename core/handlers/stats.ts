import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';

/** Results coming back: a regret run stored as the environment's stats, and what a job's results brought in. */
export function statsHandlers(s: Services): Pick<Handlers, 'memory.setStats' | 'memory.jobImports' | 'memory.snippets'> {
  return {
    'memory.setStats': ({ hash, regret, rHint, rNoHint, winRate }) => s.library.setStats(hash, { regret, rHint, rNoHint, winRate: winRate ?? null }),
    'memory.jobImports': ({ jobId }) => s.library.jobImports(jobId),
    'memory.snippets': ({ query, ids }) => s.library.snippets(query, ids),
  };
}
