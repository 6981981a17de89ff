import type { CallName } from '../api';
import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';

type RunCalls = Extract<CallName, `runs.${string}`>;

export function runsHandlers(s: Services): Pick<Handlers, RunCalls> {
  return {
    'runs.list': (i) => s.runs.list(i),
    'runs.get': ({ id }) => s.runs.get(id),
    'runs.compare': ({ a, b }) => s.runs.compare(a, b),
    'runs.measured': ({ hashes }) => s.runs.measurements(hashes),
    // A model's play of an OpenEnv server resumes against that server (its environment is not in the library).
    'runs.resume': ({ id }) => (s.openenvPlays.isOpenEnvRun(id) ? s.openenvPlays.resume(id) : s.models.resume(id)),
    'runs.delete': ({ id }) => ({ deleted: s.runs.delete(id) }),
    'runs.sweepStart': (i) => s.regretSweeps.start(i),
    'runs.sweeps': ({ limit }) => s.regretSweeps.list(limit ?? 20),
    'runs.sweepResume': ({ sweepId }) => s.regretSweeps.resume(sweepId),
    'runs.sweepCancel': ({ sweepId }) => s.regretSweeps.cancel(sweepId),
    'runs.sweepReport': ({ sweepId }) => s.regretSweeps.report(sweepId),
  };
}
