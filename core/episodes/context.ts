/** What every episode module shares: the store, the library, the runtime, settings, events. */
import { DomainError } from '../errors';
import type { EnvCatalog, EnvSourceInfo } from './catalog';
import { EnvSession, type PlayMode, type RuntimePort } from './session';
import type { EpisodeMeta, EpisodeStore } from './episodeStore';
import type { RemoteEpisodePort } from './remotePort';

import type { RuntimeChoice, RuntimeKind } from '../api/schemas';

export type { RuntimeChoice, RuntimeKind };
export type { PlayMode } from './session';

export interface EpisodeDeps {
  store: EpisodeStore;
  catalog: EnvCatalog;
  runtime: RuntimePort;
  defaults(): { maxTurns: number };
  changed?(ids: number[]): void;
  /** Episodes played over OpenEnv's protocol (runtime 'openenv'); without it they are records only. */
  remote?(ctx: EpisodeContext): RemoteEpisodePort;
  /** A regret run that has a runId finished one more episode. */
  regretProgress?(p: { runId: string; done: number; total: number; etaSec: number | null }): void;
}

export class EpisodeContext {
  constructor(readonly d: EpisodeDeps) {}

  env(hash: string): EnvSourceInfo {
    const env = this.d.catalog.byHash(hash);
    if (!env) throw new DomainError('not_found', `No environment version ${hash.slice(0, 12)} in the library`);
    return env;
  }

  meta(id: number): EpisodeMeta {
    const m = this.d.store.meta(id);
    if (!m) throw new DomainError('not_found', `No episode ${id}`);
    return m;
  }

  /** `background`: loaded ahead of its turn, behind the foreground work of running episodes. */
  openSession(source: string, maxTurns: number, runtime: RuntimeChoice, background = false, mode: PlayMode = 'spade', signal?: AbortSignal): Promise<EnvSession> {
    return EnvSession.open(this.d.runtime, source, { maxTurns, runtime, background, mode, ...(signal ? { signal } : {}) });
  }
}
