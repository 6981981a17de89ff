/** The environment memory as episodes need it: sources by hash or file stem, hints, and adding a source. */
import type { Db } from '../memory/db';
import { findEnvByStem, getEnvironment, getEnvironmentByHash, getVersion, ingest } from '../memory/repository';
import { sha256 } from '../memory/parse';

export interface EnvSourceInfo {
  hash: string;
  source: string;
  name: string | null;
  className: string | null;
  hint: string | null;
  toolUse: boolean;
  /** The file name it was imported from, without `.py` (SPADE hashes its game file's path; estimator.ts). */
  fileStem?: string | null;
}

export interface EnvCatalog {
  byHash(hash: string): EnvSourceInfo | null;
  byStem(stem: string): EnvSourceInfo | null;
  /** Adds a source to the library (idempotent) and returns its version hash. */
  add(source: string, name: string | null, path: string): string;
}

export function memoryCatalog(db: Db): EnvCatalog {
  return {
    byHash(hash) {
      const v = getVersion(db, hash);
      if (!v) return null;
      const env = getEnvironmentByHash(db, hash);
      return { hash, source: v.source, name: env?.name ?? null, className: v.className, hint: env?.hint ?? null, toolUse: env?.kind === 'tool-use', fileStem: env?.fileStem ?? null };
    },
    byStem(stem) {
      const id = findEnvByStem(db, stem);
      if (id === null) return null;
      const env = getEnvironment(db, id);
      if (!env) return null;
      return { hash: env.hash, source: env.source, name: env.name, className: env.versions.find((v) => v.hash === env.hash)?.className ?? null, hint: env.hint, toolUse: env.kind === 'tool-use' };
    },
    add(source, name, path) {
      ingest(db, { source, path, ...(name ? { name } : {}) });
      return sha256(source);
    },
  };
}
