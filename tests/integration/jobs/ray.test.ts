import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSpec } from '../../../core/jobs/launch';
import { RAY_STATES } from '../../../core/jobs/backends/ray';
import { MemorySecretStore } from '../../../core/jobs/secrets';
import { tempDir } from '../../helpers/tmp';
import { makeManager, waitState } from './helpers';
import { startRayStandIn, type RayStandIn } from './rayStandIn';

describe('ray backend against the Ray Jobs REST contract (local stand-in server)', () => {
  let ray: RayStandIn;
  let tmp: ReturnType<typeof tempDir>;
  let ctx: ReturnType<typeof makeManager>;
  const TOKEN = 'ray-bearer-token-5f2a91';
  beforeAll(async () => {
    ray = await startRayStandIn({ token: TOKEN });
    tmp = tempDir('spade-jobs-ray-');
    const secrets = new MemorySecretStore();
    secrets.set('RAY_TOKEN', TOKEN);
    ctx = makeManager(tmp.dir, { secrets });
  });
  afterAll(async () => {
    await ctx.manager.close();
    ctx.db.close();
    await ray.close();
    tmp.cleanup();
  });

  it('maps every Ray job status', () => {
    expect(RAY_STATES).toEqual({ PENDING: 'pending', RUNNING: 'running', STOPPED: 'cancelled', SUCCEEDED: 'succeeded', FAILED: 'failed' });
  });

  it('submits with a bearer token, follows logs and metrics, and stops a second job', async () => {
    const spec = buildSpec({
      name: 'ray example',
      backend: 'ray',
      ray: { address: ray.url, tokenSecret: 'RAY_TOKEN' },
      workdir: tmp.dir,
      command: ['sh', '-c', 'for s in 1 2 3; do echo "{\\"rollout/step\\": $s, \\"env/avg_regret\\": 0.$s}"; done; echo "done $WHO"'],
      env: { WHO: "it's me" },
      poolDir: null,
      importEnvironments: false,
    });
    const job = await ctx.manager.submit(spec);
    expect(job.externalId).toMatch(/^spade_wb_/);
    const done = await waitState(ctx.manager, job.id, ['succeeded', 'failed', 'lost']);
    expect(done.state, done.detail).toBe('succeeded');
    expect(ctx.manager.readLog(job.id, 0, 1 << 20).text).toContain("done it's me");
    expect(ctx.manager.store.metrics(job.id, ['env/avg_regret']).map((p) => [p.step, p.value])).toEqual([[1, 0.1], [2, 0.2], [3, 0.3]]);
    expect(ray.requests.every((r) => r.auth === `Bearer ${TOKEN}`)).toBe(true);

    const long = await ctx.manager.submit({ ...spec, name: 'ray long', command: ['sleep', '300'] });
    await waitState(ctx.manager, long.id, ['running']);
    const stopped = await ctx.manager.stop(long.id);
    expect(stopped.state).toBe('cancelled');
    expect(ray.requests.some((r) => r.method === 'POST' && r.path.endsWith('/stop'))).toBe(true);
    // Removing a finished Ray job deletes it on the cluster too, then forgets it here.
    await ctx.manager.remove(long.id);
    expect(ray.requests.some((r) => r.method === 'DELETE' && r.path === `/api/jobs/${stopped.externalId}`)).toBe(true);
    expect(() => ctx.manager.get(long.id)).toThrow(/No job/);
  });

  it('reports a wrong token as an error instead of a state', async () => {
    const ctx2 = makeManager(tempDir('spade-jobs-ray2-').dir);
    try {
      const spec = buildSpec({ name: 'no token', backend: 'ray', ray: { address: ray.url }, command: ['true'], poolDir: null });
      await expect(ctx2.manager.submit(spec)).rejects.toThrow(/HTTP 401/);
    } finally {
      await ctx2.manager.close();
      ctx2.db.close();
    }
  });
});
