import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSpec } from '../../../core/jobs/launch';
import { RAY_STATES, RayBackend } from '../../../core/jobs/backends/ray';
import type { JobManager } from '../../../core/jobs/manager';
import { MemorySecretStore } from '../../../core/jobs/secrets';
import type { JobSpec } from '../../../core/jobs/types';
import { tempDir } from '../../helpers/tmp';
import { ciServices, makeManager, rolloutLines, waitFor, waitState } from './helpers';
import { startRayStandIn, type RayStandIn } from './rayStandIn';

describe('ray backend under injected faults and bearer tokens (stand-in server; the real head is in ray-head.test.ts)', () => {
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

  /** A shell run that prints numbered lines in phases; each later phase waits for a gate file. */
  const phased = (name: string, phases: [number, number][], gates: string[]): JobSpec =>
    buildSpec({
      name,
      backend: 'ray',
      ray: { address: ray.url, tokenSecret: 'RAY_TOKEN' },
      workdir: tmp.dir,
      command: [
        'sh',
        '-c',
        phases
          .map(([from, to], i) => `${i > 0 ? `while [ ! -e "$GATE${i}" ]; do sleep 0.05; done; ` : ''}i=${from}; while [ $i -le ${to} ]; do echo "rollout $i: phase ${i + 1} of the tail test"; i=$((i+1)); done`)
          .join('; '),
      ],
      env: Object.fromEntries(gates.map((g, i) => [`GATE${i + 1}`, g])),
      poolDir: null,
      importEnvironments: false,
    });
  const numbered = (n: number): string[] => Array.from({ length: n }, (_, i) => `rollout ${i + 1}:`);
  /** The job ends well and the mirror holds the cluster's log byte for byte: rollouts 1..lines, in order. */
  const expectWholeLog = async (manager: JobManager, stand: RayStandIn, jobId: string, ext: string, lines: number): Promise<void> => {
    const done = await waitState(manager, jobId, ['succeeded', 'failed', 'lost']);
    expect(done.state, done.detail).toBe('succeeded');
    const mirrored = manager.readLog(jobId, 0, 1 << 20).text;
    expect(mirrored).toBe(stand.jobs.get(ext)!.logs);
    expect(rolloutLines(mirrored).map((l) => l.slice(0, l.indexOf(':') + 1))).toEqual(numbered(lines));
  };
  const logGets = (stand: RayStandIn, externalId: string): number => stand.requests.filter((r) => r.method === 'GET' && r.path === `/api/jobs/${externalId}/logs`).length;

  it('follows a running job over the /logs/tail WebSocket, byte for byte', async () => {
    const gate = join(tmp.dir, 'gate-tail');
    const job = await ctx.manager.submit(phased('ray tail', [[1, 50], [51, 400]], [gate]));
    const ext = job.externalId!;
    await waitFor('the tail socket and the first phase', () =>
      ray.tailRequests.some((t) => t.job === ext && t.accepted) && rolloutLines(ctx.manager.readLog(job.id, 0, 1 << 20).text).length === 50);
    writeFileSync(gate, '');
    await expectWholeLog(ctx.manager, ray, job.id, ext, 400);
    expect(ray.tailRequests.filter((t) => t.job === ext)).toEqual([{ job: ext, auth: `Bearer ${TOKEN}`, accepted: true }]);
    // One catch-up read before the socket opened and one final read after the end: every byte
    // in between came through the tail, not through polling.
    expect(logGets(ray, ext)).toBe(2);
  });

  it('resumes after the tail socket is cut mid-job with no gap and no duplicate', async () => {
    const gate1 = join(tmp.dir, 'gate-drop-1');
    const gate2 = join(tmp.dir, 'gate-drop-2');
    const job = await ctx.manager.submit(phased('ray tail drop', [[1, 50], [51, 3000], [3001, 3100]], [gate1, gate2]));
    const ext = job.externalId!;
    const accepted = (): number => ray.tailRequests.filter((t) => t.job === ext && t.accepted).length;
    await waitFor('the tail socket and the first phase', () => accepted() === 1 && rolloutLines(ctx.manager.readLog(job.id, 0, 1 << 20).text).length === 50);
    // The link drops, and the job writes while no socket is there to carry it.
    expect(ray.dropTails()).toBe(1);
    writeFileSync(gate1, '');
    await waitFor('a second tail socket', () => accepted() >= 2);
    writeFileSync(gate2, '');
    await expectWholeLog(ctx.manager, ray, job.id, ext, 3100);
    // The reconnect caught up with GET /logs before resuming the tail.
    expect(logGets(ray, ext)).toBeGreaterThanOrEqual(3);
  });

  it('falls back to polling when the cluster has no tail endpoint', async () => {
    const plain = await startRayStandIn({ tail: false });
    const dir = tempDir('spade-jobs-ray3-');
    const ctx3 = makeManager(dir.dir);
    try {
      const gate = join(dir.dir, 'gate-poll');
      const spec = phased('ray polling', [[1, 20], [21, 60]], [gate]);
      const job = await ctx3.manager.submit({ ...spec, workdir: dir.dir, ray: { address: plain.url } });
      const ext = job.externalId!;
      await waitFor('the first phase by polling', () => rolloutLines(ctx3.manager.readLog(job.id, 0, 1 << 20).text).length === 20);
      writeFileSync(gate, '');
      await expectWholeLog(ctx3.manager, plain, job.id, ext, 60);
      // Refused once, then never asked again for this job.
      expect(plain.tailRequests).toEqual([{ job: ext, auth: undefined, accepted: false }]);
      expect(logGets(plain, ext)).toBeGreaterThanOrEqual(2);
    } finally {
      await ctx3.manager.close();
      ctx3.db.close();
      await plain.close();
      dir.cleanup();
    }
  });

  it('waits for a fresh head\'s job agent, and shows the last line of a traceback', async () => {
    const fresh = await startRayStandIn({ agentBusy: 2 });
    const dir = tempDir('spade-jobs-ray4-');
    const c = makeManager(dir.dir);
    try {
      const job = await c.manager.submit(buildSpec({ name: 'fresh head', backend: 'ray', ray: { address: fresh.url }, workdir: dir.dir, command: ['true'], poolDir: null, importEnvironments: false }));
      expect((await waitState(c.manager, job.id, ['succeeded', 'failed', 'lost'])).state).toBe('succeeded');
      expect(fresh.requests.filter((r) => r.method === 'POST' && r.path === '/api/jobs/').length).toBe(3);
      // A head that never gets ready: the submit gives up with the traceback's cause, not its first lines.
      const busy = await startRayStandIn({ agentBusy: 1000 });
      try {
        const quick = new RayBackend({ secret: () => undefined, agentWaitMs: 1500 });
        const spec = buildSpec({ name: 'never ready', backend: 'ray', ray: { address: busy.url }, workdir: dir.dir, command: ['true'], poolDir: null });
        await expect(quick.submit({ ...c.manager.get(job.id), spec }, {})).rejects.toThrow(/HTTP 503 RuntimeError: No available agent to submit job, please try again later\.$/);
      } finally {
        await busy.close();
      }
    } finally {
      await c.manager.close();
      c.db.close();
      await fresh.close();
      dir.cleanup();
    }
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

const ci = ciServices();
(ci ? describe : describe.skip)('ray backend through an SSH tunnel (real sshd, local stand-in)', () => {
  it('submits, tails and finishes with every request carried by forwarded SSH channels', async () => {
    const TOKEN = 'tunnel-token-81c3';
    const ray = await startRayStandIn({ token: TOKEN });
    const dir = tempDir('spade-jobs-ray-tunnel-');
    const secrets = new MemorySecretStore();
    secrets.set('RAY_TOKEN', TOKEN);
    const ctx = makeManager(dir.dir, { secrets });
    const ssh = { host: ci!.host, port: ci!.port, user: ci!.user, identityFile: ci!.key, knownHostsFile: ci!.knownHosts };
    try {
      const spec = buildSpec({
        name: 'ray tunnel',
        backend: 'ray',
        ssh,
        // The stand-in's port as the SSH host sees it (the same machine here).
        ray: { tunnel: true, address: ray.url, tokenSecret: 'RAY_TOKEN' },
        workdir: dir.dir,
        command: ['sh', '-c', 'for s in 1 2; do echo "{\\"rollout/step\\": $s, \\"env/avg_regret\\": 0.$s}"; done; echo tunnelled'],
        poolDir: null,
        importEnvironments: false,
      });
      const job = await ctx.manager.submit(spec);
      const done = await waitState(ctx.manager, job.id, ['succeeded', 'failed', 'lost']);
      expect(done.state, done.detail).toBe('succeeded');
      expect(ctx.manager.readLog(job.id, 0, 1 << 20).text).toContain('tunnelled');
      expect(ctx.manager.store.metrics(job.id, ['env/avg_regret']).map((p) => p.value)).toEqual([0.1, 0.2]);
      const conn = ctx.manager.connection(ssh);
      // submit, status polls and log reads each went through their own forwarded channel
      expect(conn.forwards).toBeGreaterThanOrEqual(ray.requests.length);
      expect(ray.requests.length).toBeGreaterThanOrEqual(2);

      // A dashboard that is not listening on the SSH host side: a clear error, not a hang.
      const closed = await startRayStandIn({ token: TOKEN });
      const deadUrl = closed.url;
      await closed.close();
      await expect(ctx.manager.submit({ ...spec, name: 'ray tunnel to nothing', ray: { ...spec.ray!, address: deadUrl } })).rejects.toThrow(/SSH tunnel to 127\.0\.0\.1:\d+ .* refused/);
    } finally {
      await ctx.manager.close();
      ctx.db.close();
      await ray.close();
      dir.cleanup();
    }
  });
});
