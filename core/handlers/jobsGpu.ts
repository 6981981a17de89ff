import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';

/** GPU use of a job's nodes, as the job's sampler kept it (core/jobs/gpu). */
export function jobsGpuHandlers(s: Services): Pick<Handlers, 'jobs.gpu'> {
  return {
    'jobs.gpu': ({ id, maxPoints }) => {
      s.jobs.manager.get(id);
      return s.jobs.manager.gpu.store.view(id, maxPoints ?? 600);
    },
  };
}
