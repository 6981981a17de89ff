/**
 * The episode service of a running app, created on first use so the composition root does not
 * have to know about it; it closes its runtime sessions before the runtime shuts down.
 */
import type { Services } from '../services/services';
import { memoryCatalog } from './catalog';
import { EpisodeService } from './service';
import { EpisodeStore } from './store';

const byServices = new WeakMap<Services, EpisodeService>();

export function episodeService(s: Services): EpisodeService {
  let svc = byServices.get(s);
  if (!svc) {
    svc = new EpisodeService({
      store: new EpisodeStore(s.db),
      catalog: memoryCatalog(s.db),
      runtime: s.runtime,
      defaults: () => ({ maxTurns: s.settings.get().maxTurns }),
      changed: (ids) => s.events.emit('episodes.changed', { ids }),
    });
    byServices.set(s, svc);
    const created = svc;
    s.onClose(() => created.closeAll());
  }
  return svc;
}
