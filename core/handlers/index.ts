import type { CallContext, Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';
import { appHandlers } from './app';
import { memoryHandlers } from './memory';
import { editorHandlers } from './editor';
import { runtimeHandlers } from './runtime';
import { jobsHandlers } from './jobs';
import { jobsGpuHandlers } from './jobsGpu';
import { episodesHandlers } from './episodes';
import { auditHandlers } from './audit';
import { modelsHandlers } from './models';
import { runsHandlers } from './runs';
import { designHandlers } from './design';
import { statsHandlers } from './stats';
import { openenvHandlers } from './openenv';
import { trainHandlers } from './train';

/**
 * Every call in the contract must have a handler: the type below fails to compile otherwise. Each is
 * wrapped once so a write refused while the database is paused reads as such on every transport.
 */
export function createHandlers(s: Services): Handlers {
  const all: Handlers = {
    ...appHandlers(s),
    ...memoryHandlers(s),
    ...editorHandlers(s),
    ...runtimeHandlers(s),
    ...jobsHandlers(s),
    ...jobsGpuHandlers(s),
    ...episodesHandlers(s),
    ...auditHandlers(s),
    ...modelsHandlers(s),
    ...runsHandlers(s),
    ...designHandlers(s),
    ...statsHandlers(s),
    ...openenvHandlers(s),
    ...trainHandlers(s),
  };
  const wrapped: Record<string, (i: unknown, c: CallContext) => Promise<unknown>> = {};
  for (const [name, h] of Object.entries(all) as [string, (i: unknown, c: CallContext) => unknown][]) {
    wrapped[name] = async (i, c) => {
      try {
        return await h(i, c);
      } catch (e) {
        throw s.translateError(e);
      }
    };
  }
  return wrapped as unknown as Handlers;
}
