import { ApiError } from '../api';
import { attachStats, getEnvironment, getEnvironmentByHash } from '../memory/repository';
import { importsOfJob } from '../memory/importLog';
import { searchSnippets } from '../memory/snippets';
import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';

/** Results coming back: a regret run stored as the environment's stats, and what a job's results brought in. */
export function statsHandlers(s: Services): Pick<Handlers, 'memory.setStats' | 'memory.jobImports' | 'memory.snippets'> {
  return {
    'memory.setStats': ({ hash, regret, rHint, rNoHint, winRate }) => {
      const env = getEnvironmentByHash(s.db, hash);
      if (!env) throw new ApiError('not_found', `No environment holds version ${hash.slice(0, 12)}`);
      if (attachStats(s.db, env.id, { regret, rHint, rNoHint, winRate: winRate ?? null })) s.events.emit('memory.changed', { ids: [env.id], reason: 'stats' });
      return getEnvironment(s.db, env.id)!;
    },
    'memory.jobImports': ({ jobId }) => importsOfJob(s.db, jobId),
    'memory.snippets': ({ query, ids }) => searchSnippets(s.db, query, ids),
  };
}
