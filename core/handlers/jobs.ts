import { errorMessage, type CallName } from '../api';
import { DomainError, isUnreachable } from '../errors';
import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';
import { loadRecipes } from '../jobs/recipes';
import { sshLocalPaths } from './paths';

type JobCalls = Extract<CallName, `jobs.${string}`>;

/**
 * Gives an unreachable host (Node's and ssh2's structural codes) its contract code; a host key to
 * confirm is a HostKeyError, itself a DomainError; anything else is a DomainError or a bug.
 */
async function guard<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isUnreachable(e)) throw new DomainError('unavailable', errorMessage(e));
    throw e;
  }
}

export function jobsHandlers(s: Services): Pick<Handlers, JobCalls> {
  const j = s.jobs;
  return {
    'jobs.list': () => ({ jobs: j.manager.list().map((r) => j.summary(r)) }),
    'jobs.get': ({ id }) => guard(() => j.summary(j.manager.get(id))),
    'jobs.recipes': () => ({
      recipes: loadRecipes().map((r) => ({
        id: r.id,
        title: r.title,
        description: r.description,
        backends: r.backends,
        command: r.command,
        env: r.env,
        requiredEnv: r.requiredEnv,
        optionalEnv: r.optionalEnv,
        secretEnv: r.secretEnv,
        ...(r.slurm ? { slurm: r.slurm } : {}),
        ...(r.ray ? { ray: r.ray } : {}),
        warnings: r.warnings,
        acceptsArgs: r.acceptsArgs,
        envValues: r.envValues,
        fixedEnv: r.fixedEnv,
        ...(r.spadeScript ? { spadeScript: r.spadeScript } : {}),
      })),
    }),
    'jobs.sshHosts': () => ({ hosts: j.sshHosts() }),
    'jobs.probeHost': ({ ssh }) => guard(() => j.manager.probeHost(sshLocalPaths(ssh))),
    'jobs.trustHost': ({ host, port, fingerprint }) =>
      guard(() => {
        j.manager.trustHostKey(host, port, fingerprint);
        return { trusted: true };
      }),
    'jobs.submit': (input) => guard(() => j.submit(input.ssh ? { ...input, ssh: sshLocalPaths(input.ssh) } : input)),
    'jobs.watch': ({ id }) =>
      guard(() => {
        j.manager.watch(id);
        return { watching: true };
      }),
    'jobs.attach': (input) => guard(async () => j.summary(await j.manager.attach(input.ssh ? { ...input, ssh: sshLocalPaths(input.ssh) } : input))),
    'jobs.stop': ({ id, confirmAttached }) =>
      guard(async () => {
        const stopped = await j.manager.stop(id, { confirmAttached: confirmAttached === true });
        return { ...j.summary(stopped), stopAnswer: stopped.stopAnswer };
      }),
    'jobs.remove': ({ id }) =>
      guard(async () => {
        await j.manager.remove(id);
        return { removed: true };
      }),
    'jobs.log': ({ id, offset, maxBytes }) => guard(() => j.manager.readLog(id, offset, maxBytes ?? 1 << 20)),
    'jobs.metrics': ({ id, keys }) =>
      guard(() => {
        j.manager.get(id);
        return j.metrics(id, keys);
      }),
    'jobs.artefacts': ({ id }) => guard(() => j.artefacts(id)),
    'jobs.continue': ({ id, loadDir }) => guard(() => j.continueRun(id, loadDir)),
    'jobs.secrets': () => ({ names: j.secrets.names(), store: j.secrets.kind }),
    'jobs.setSecret': ({ name, value }) => {
      if (value === '') j.secrets.delete(name);
      else j.secrets.set(name, value);
      return { names: j.secrets.names(), store: j.secrets.kind };
    },
  };
}
