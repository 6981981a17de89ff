import { resolve } from 'node:path';
import { ApiError } from '../api';
import { exportEnvironmentsAsync } from '../memory/exporter';
import {
  addVersion,
  facets,
  getEnvironment,
  getEnvironmentByHash,
  getVersion,
  libraryStats,
  listVersions,
  matchingIds,
  search,
  selectIds,
  setSeed,
  tagEnvironments,
  updateEnvironment,
} from '../memory/repository';
import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';

type MemoryCall =
  | 'memory.search'
  | 'memory.matchingIds'
  | 'memory.get'
  | 'memory.version'
  | 'memory.versions'
  | 'memory.addVersion'
  | 'memory.setSeed'
  | 'memory.tag'
  | 'memory.update'
  | 'memory.import'
  | 'memory.importCancel'
  | 'memory.importStatus'
  | 'memory.export'
  | 'memory.stats'
  | 'memory.facets';

export function memoryHandlers(s: Services): Pick<Handlers, MemoryCall> {
  const db = s.db;
  const changed = (reason: string, ids?: number[]) => s.events.emit('memory.changed', ids ? { reason, ids: ids.slice(0, 1000) } : { reason });
  return {
    'memory.search': (i) => search(db, i),
    'memory.matchingIds': (i) => matchingIds(db, i),
    'memory.get': (i) => {
      const d = 'id' in i ? getEnvironment(db, i.id) : getEnvironmentByHash(db, i.hash);
      if (!d) throw new ApiError('not_found', 'id' in i ? `No environment ${i.id}` : `No version ${i.hash.slice(0, 12)}`);
      return d;
    },
    'memory.version': ({ hash }) => {
      const v = getVersion(db, hash);
      if (!v) throw new ApiError('not_found', `No version ${hash.slice(0, 12)}`);
      return v;
    },
    'memory.versions': ({ envId }) => {
      if (!getEnvironment(db, envId)) throw new ApiError('not_found', `No environment ${envId}`);
      return listVersions(db, envId);
    },
    'memory.addVersion': ({ envId, source, parentHash, message }) => {
      const r = addVersion(db, envId, source, parentHash, message);
      changed('version', [envId]);
      return r;
    },
    'memory.setSeed': ({ ids, seed }) => {
      const n = setSeed(db, ids, seed);
      changed('seed', ids);
      return { changed: n };
    },
    'memory.tag': ({ ids, add, remove }) => {
      if (!add.length && !remove.length) throw new ApiError('invalid_input', 'Give tags to add or remove');
      const n = tagEnvironments(db, ids, add, remove);
      changed('tag', ids);
      return { changed: n };
    },
    'memory.update': ({ id, ...patch }) => {
      const d = updateEnvironment(db, id, patch);
      changed('update', [id]);
      return d;
    },
    'memory.import': ({ paths, jobId, runId }) => {
      const job = s.memory.startImport(
        paths.map((p) => resolve(p)),
        { ...(jobId ? { jobId } : {}), ...(runId ? { runId } : {}) },
      );
      return { jobId: job.jobId };
    },
    'memory.importCancel': ({ jobId }) => ({ cancelled: s.memory.cancel(jobId) }),
    'memory.importStatus': ({ jobId }) => s.memory.status(jobId),
    'memory.export': async ({ selection, format, outDir }) => {
      const ids = selectIds(db, selection);
      if (!ids.length) throw new ApiError('invalid_input', 'The selection is empty: nothing to export');
      const out = resolve(outDir);
      return { ...(await exportEnvironmentsAsync(db, ids, { format, outDir: out })), outDir: out };
    },
    'memory.stats': () => libraryStats(db),
    'memory.facets': ({ query, filters }) => facets(db, query, filters),
  };
}
