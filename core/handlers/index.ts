import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';
import { appHandlers } from './app';
import { memoryHandlers } from './memory';
import { editorHandlers } from './editor';
import { runtimeHandlers } from './runtime';
import { jobsHandlers } from './jobs';
import { episodesHandlers } from './episodes';
import { auditHandlers } from './audit';
import { writeBackHandlers } from './writeBack';
import { statsHandlers } from './stats';

/** Every call in the contract must have a handler: the type below fails to compile otherwise. */
export function createHandlers(s: Services): Handlers {
  return {
    ...appHandlers(s),
    ...memoryHandlers(s),
    ...editorHandlers(s),
    ...runtimeHandlers(s),
    ...jobsHandlers(s),
    ...episodesHandlers(s),
    ...auditHandlers(s),
    ...writeBackHandlers(s),
    ...statsHandlers(s),
  };
}
