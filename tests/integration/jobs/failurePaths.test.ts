import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { buildSpec } from '../../../core/jobs/launch';
import { MemorySecretStore } from '../../../core/jobs/secrets';
import type { SshTarget } from '../../../core/jobs/types';
import { toApiError } from '../../../core/server/dispatcher';
import { tempDir } from '../../helpers/tmp';
import { ciRay, ciServices, makeManager, SERVICES_MISSING } from './helpers';

/**
 * Each backend's failure paths, against the real sshd, Slurm and Ray head, through the dispatcher's
 * own mapping (toApiError): every one reaches the person with a contract code they can act on,
 * never as `internal` (which means "a bug"), and no secret's value survives in the message.
 */
const ci = ciServices();
const ray = ciRay();
if (!ci) console.warn(`[jobs failure-path tests skipped] ${SERVICES_MISSING}`);
const d = ci ? describe : describe.skip;

const SECRET = 'tok-failure-path-6d1f0a';
const tmp = tempDir('spade-jobs-failures-');
const secrets = new MemorySecretStore();
secrets.set('SPADE_TEST_TOKEN', SECRET);
let ctx: ReturnType<typeof makeManager>;
beforeAll(() => {
  ctx = makeManager(tmp.dir, { secrets });
});
afterAll(async () => {
  await ctx.manager.close();
  ctx.db.close();
  tmp.cleanup();
});

function target(extra: Partial<SshTarget> = {}): SshTarget {
  return { host: ci!.host, port: ci!.port, user: ci!.user, identityFile: ci!.key, knownHostsFile: ci!.knownHosts, ...extra };
}

/** What the person sees for a rejected promise: the dispatcher's mapping of the thrown value. */
async function seen(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  const logged: string[] = [];
  try {
    await p;
  } catch (e) {
    const api = toApiError(e, 'jobs.test', (m) => logged.push(m));
    return { code: api.code, message: api.message };
  }
  throw new Error('expected a failure');
}

d('job backends fail with contract codes, never internal', () => {
  it('ssh: an unknown host key, an unreachable port, a workdir that cannot be made (secret redacted)', async () => {
    const unknownKey = await seen(ctx.manager.submit(buildSpec({ name: 'k', backend: 'ssh', ssh: target({ knownHostsFile: join(tmp.dir, 'none') }), command: ['true'], poolDir: null })));
    expect(unknownKey.code).toBe('unauthorized');

    const closed = await seen(ctx.manager.submit(buildSpec({ name: 'c', backend: 'ssh', ssh: target({ port: 1 }), command: ['true'], poolDir: null })));
    expect(closed.code).toBe('unavailable');

    // The remote's stderr names the path, and the path holds the secret's value.
    const workdir = await seen(
      ctx.manager.submit(buildSpec({ name: 'w', backend: 'ssh', ssh: target(), workdir: `/proc/${SECRET}/w`, command: ['true'], secretEnv: ['SPADE_TEST_TOKEN'], poolDir: null })),
    );
    expect(workdir.code).toBe('unavailable');
    expect(workdir.message).not.toContain(SECRET);
    expect(ctx.manager.list().every((j) => !j.detail.includes(SECRET))).toBe(true);
  });

  it.runIf(ci?.slurm)('slurm: sbatch refuses, an unknown job id, a malformed job id', async () => {
    const refused = await seen(ctx.manager.submit(buildSpec({ name: 's', backend: 'slurm', ssh: target(), workdir: join(tmp.dir, 'slurm'), command: ['true'], slurm: { partition: 'no_such_partition' }, poolDir: null })));
    expect(refused.code).toBe('unavailable');
    const unknown = await seen(ctx.manager.attach({ name: 'u', backend: 'slurm', externalId: '987654321', ssh: target() }));
    expect(unknown.code).toBe('not_found');
    const malformed = await seen(ctx.manager.attach({ name: 'm', backend: 'slurm', externalId: '12; rm -rf ~', ssh: target() }));
    expect(malformed.code).toBe('invalid_input');
  });

  it.runIf(ray)('ray: an unknown submission, an unreachable head', async () => {
    const unknown = await seen(ctx.manager.attach({ name: 'r', backend: 'ray', externalId: 'spade_games_4b_1', ray: { address: ray!.address } }));
    expect(unknown.code).toBe('not_found');
    const submitDown = await seen(ctx.manager.submit(buildSpec({ name: 's', backend: 'ray', ray: { address: 'http://127.0.0.1:1' }, command: ['true'], poolDir: null })));
    expect(submitDown.code).toBe('unavailable');
    const down = await seen(ctx.manager.attach({ name: 'd', backend: 'ray', externalId: 'x', ray: { address: 'http://127.0.0.1:1' } }));
    expect(down.code).toBe('unavailable');
  });
});
