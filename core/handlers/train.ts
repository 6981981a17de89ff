import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';

/** A local GRPO job's adapters and evaluations (core/jobs/trainRun.ts). */
export function trainHandlers(s: Services): Pick<Handlers, 'train.checkpoints' | 'train.evaluate'> {
  return {
    'train.checkpoints': ({ id }) => s.jobs.trainRun(id),
    'train.evaluate': ({ id, adapter }) => s.jobs.trainEvaluate(id, adapter),
  };
}
