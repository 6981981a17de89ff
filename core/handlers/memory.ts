import type { CallName } from '../api';
import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';
import { localPath } from './paths';

// Write-back and stats calls have handlers of their own (writeBack.ts, stats.ts).
type MemoryCall = Exclude<Extract<CallName, `memory.${string}`>, 'memory.setStats' | 'memory.jobImports' | 'memory.snippets'>;

export function memoryHandlers(s: Services): Pick<Handlers, MemoryCall> {
  const lib = s.library;
  return {
    'memory.search': (i) => lib.search(i),
    'memory.matchingIds': (i) => lib.matchingIds(i),
    'memory.get': (i) => lib.get(i),
    'memory.version': ({ hash }) => lib.version(hash),
    'memory.versions': ({ envId }) => lib.versions(envId),
    'memory.addVersion': ({ envId, source, parentHash, message }) => lib.addVersion(envId, source, parentHash, message),
    'memory.setSeed': ({ ids, seed }) => ({ changed: lib.setSeed(ids, seed) }),
    'memory.tag': ({ ids, add, remove }) => ({ changed: lib.tag(ids, add, remove) }),
    'memory.update': ({ id, ...patch }) => lib.update(id, patch),
    'memory.import': ({ paths, jobId, runId, followLinks }) => ({
      jobId: s.memory.startImport(
        paths.map(localPath),
        { ...(jobId ? { jobId } : {}), ...(runId ? { runId } : {}), ...(followLinks ? { followLinks } : {}) },
      ).jobId,
    }),
    'memory.importCancel': ({ jobId }) => ({ cancelled: s.memory.cancel(jobId) }),
    'memory.importStatus': ({ jobId }) => s.memory.status(jobId),
    'memory.export': async ({ selection, format, outDir }) => {
      const out = localPath(outDir);
      return { ...(await lib.exportAsync(selection, { format, outDir: out })), outDir: out };
    },
    'memory.stats': () => lib.stats(),
    'memory.facets': ({ query, filters }) => lib.facets(query, filters),
  };
}
