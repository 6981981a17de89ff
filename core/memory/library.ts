/**
 * The library's reads and edits as one service: what the memory.* calls do besides importing.
 * Lookups that find nothing are `not_found` here, and every edit says which environments changed.
 */
import { DomainError } from '../errors';
import type { Db } from './db';
import { exportEnvironments, exportEnvironmentsAsync, type ExportOptions, type MeasuredRuns } from './exporter';
import {
  attachStats,
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
  type EnvPatch,
  type SearchInput,
  type Selection,
} from './repository';
import type { MemoryFilters } from '../api';
import type { MemoryChange } from '../api/calls/memory';
import { importsOfJob } from './importLogStore';
import { searchSnippets } from './snippetStore';

export interface LibraryServiceDeps {
  db: Db;
  /** Environments changed (at most the first 1,000 ids are named; lists refresh either way). */
  changed: (change: MemoryChange) => void;
  /** Model runs' measurements, which an export carries (core/runs' RunStore; runs sit above memory). */
  runs: MeasuredRuns;
}

export class LibraryService {
  constructor(private readonly deps: LibraryServiceDeps) {}

  private get db(): Db {
    return this.deps.db;
  }

  search(i: SearchInput) {
    return search(this.db, i);
  }

  matchingIds(i: { query?: string; filters?: MemoryFilters }) {
    return matchingIds(this.db, i);
  }

  get(ref: { id: number } | { hash: string }) {
    const d = 'id' in ref ? getEnvironment(this.db, ref.id) : getEnvironmentByHash(this.db, ref.hash);
    if (!d) throw new DomainError('not_found', 'id' in ref ? `No environment ${ref.id}` : `No version ${ref.hash.slice(0, 12)}`);
    return d;
  }

  /** A regret run's (or a job's) results stored as the environment's stats. */
  setStats(hash: string, stats: { regret: number | null; rHint: number | null; rNoHint: number | null; winRate: number | null }) {
    const env = getEnvironmentByHash(this.db, hash);
    if (!env) throw new DomainError('not_found', `No environment holds version ${hash.slice(0, 12)}`);
    if (attachStats(this.db, env.id, stats)) this.deps.changed({ reason: 'stats', ids: [env.id] });
    return getEnvironment(this.db, env.id)!;
  }

  jobImports(jobId: string) {
    return importsOfJob(this.db, jobId);
  }

  snippets(query: string, ids: number[]) {
    return searchSnippets(this.db, query, ids);
  }

  version(hash: string) {
    const v = getVersion(this.db, hash);
    if (!v) throw new DomainError('not_found', `No version ${hash.slice(0, 12)}`);
    return v;
  }

  versions(envId: number) {
    if (!getEnvironment(this.db, envId)) throw new DomainError('not_found', `No environment ${envId}`);
    return listVersions(this.db, envId);
  }

  addVersion(envId: number, source: string, parentHash: string, message?: string) {
    const r = addVersion(this.db, envId, source, parentHash, message);
    this.deps.changed({ reason: 'version', ids: [envId] });
    return r;
  }

  setSeed(ids: number[], seed: boolean): number {
    const n = setSeed(this.db, ids, seed);
    this.deps.changed({ reason: 'seed', ids });
    return n;
  }

  tag(ids: number[], add: string[], remove: string[]): number {
    if (!add.length && !remove.length) throw new DomainError('invalid_input', 'Give tags to add or remove');
    const n = tagEnvironments(this.db, ids, add, remove);
    this.deps.changed({ reason: 'tag', ids });
    return n;
  }

  update(id: number, patch: EnvPatch) {
    const d = updateEnvironment(this.db, id, patch);
    this.deps.changed({ reason: 'update', ids: [id] });
    return d;
  }

  export(selection: Selection, opts: ExportOptions) {
    const ids = selectIds(this.db, selection);
    if (!ids.length) throw new DomainError('invalid_input', 'The selection is empty: nothing to export');
    return exportEnvironments(this.db, ids, opts, this.deps.runs);
  }

  /** The same, writing asynchronously: a file system that blocks (a dead mount, /proc) cannot freeze the server. */
  exportAsync(selection: Selection, opts: ExportOptions) {
    const ids = selectIds(this.db, selection);
    if (!ids.length) throw new DomainError('invalid_input', 'The selection is empty: nothing to export');
    return exportEnvironmentsAsync(this.db, ids, opts, this.deps.runs);
  }

  stats() {
    return libraryStats(this.db);
  }

  facets(query: string, filters: MemoryFilters) {
    return facets(this.db, query, filters);
  }
}
