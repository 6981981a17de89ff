import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSpec } from '../../../core/jobs/launch';
import { MemorySecretStore } from '../../../core/jobs/secrets';
import { tempDir } from '../../helpers/tmp';
import { ciRay, filesContaining, makeManager, rayRest, rolloutLines, waitFor, waitState } from './helpers';

const ray = ciRay();

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Processes whose command line holds `needle` (the marker each test job carries). */
function processesWith(needle: string): string[] {
  return execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(needle) && !l.includes('ps -eo'));
}

(ray ? describe : describe.skip)('ray backend against a real Ray head (.ci/services.sh start-ray)', () => {
  let tmp: ReturnType<typeof tempDir>;
  let ctx: ReturnType<typeof makeManager>;
  /** Jobs a failed test would leave on the shared head. */
  const cleanups: (() => Promise<void>)[] = [];
  const SECRET = `wandb-secret-${randomBytes(8).toString('hex')}`;
  beforeAll(() => {
    tmp = tempDir('spade-jobs-rayhead-');
    const secrets = new MemorySecretStore();
    secrets.set('WANDB_API_KEY', SECRET);
    ctx = makeManager(tmp.dir, { secrets });
  });
  afterAll(async () => {
    for (const c of cleanups) await c().catch(() => undefined);
    await ctx.manager.close();
    ctx.db.close();
    tmp.cleanup();
  });

  it('submits, follows the log and both metric forms, and reports success and failure from Ray', async () => {
    const spec = buildSpec({
      name: 'ray head ok',
      backend: 'ray',
      ray: { address: ray!.address, numCpus: 1 },
      workdir: tmp.dir,
      command: [
        'sh',
        '-c',
        `for s in 1 2 3; do echo "rollout $s: {'rollout/mean_return': 0.$s, 'env/avg_regret': np.float64(0.0$s)}"; done; echo '{"rollout/step": 4, "env/avg_regret": 0.5}'; echo "done $WHO"`,
      ],
      env: { WHO: "it's me" },
      poolDir: null,
      importEnvironments: false,
    });
    const job = await ctx.manager.submit(spec);
    const done = await waitState(ctx.manager, job.id, ['succeeded', 'failed', 'lost', 'cancelled']);
    expect(done.state, done.detail).toBe('succeeded');
    expect(ctx.manager.readLog(job.id, 0, 1 << 20).text).toContain("done it's me");
    expect(ctx.manager.store.metrics(job.id, ['env/avg_regret']).map((p) => [p.step, p.value])).toEqual([[1, 0.01], [2, 0.02], [3, 0.03], [4, 0.5]]);
    // What the entrypoint reserves reaches the head: a job holding both of its CPUs makes the next wait.
    const whole = await ctx.manager.submit({ ...spec, name: 'ray head both cpus', ray: { address: ray!.address, numCpus: 2 }, command: ['sleep', '6'] });
    await waitState(ctx.manager, whole.id, ['running']);
    const next = await ctx.manager.submit({ ...spec, name: 'ray head one cpu', ray: { address: ray!.address, numCpus: 1 }, command: ['true'] });
    await new Promise((r) => setTimeout(r, 2000));
    expect(ctx.manager.get(whole.id).state).toBe('running');
    expect(ctx.manager.get(next.id).state).toBe('pending');
    expect((await waitState(ctx.manager, next.id, ['succeeded', 'failed', 'lost', 'cancelled'])).state).toBe('succeeded');

    const bad = await ctx.manager.submit({ ...spec, name: 'ray head fails', command: ['sh', '-c', 'echo about to fail; exit 3'] });
    const failed = await waitState(ctx.manager, bad.id, ['succeeded', 'failed', 'lost', 'cancelled']);
    expect(failed.state, failed.detail).toBe('failed');
    expect(failed.exitCode).toBe(3);
    expect(failed.detail).toMatch(/FAILED .*exit code 3/);
    expect(failed.detail.length).toBeLessThan(600);
  });

  it('runs the example-run recipe on the head: files shipped, {{JOB_DIR}} expanded, metrics.jsonl charted, environments back', async () => {
    const job = await ctx.manager.submit(
      buildSpec({ name: 'ray example run', backend: 'ray', recipe: 'example-run', ray: { address: ray!.address }, workdir: join(tmp.dir, 'ex'), extraArgs: ['--step-delay', '0', '--rollouts', '2'] }),
    );
    const done = await waitState(ctx.manager, job.id, ['succeeded', 'failed', 'lost', 'cancelled'], 120_000);
    expect(done.state, done.detail).toBe('succeeded');
    expect(ctx.manager.readLog(job.id, 0, 1 << 20).text).toContain('spade-example-run: done (2 rollout steps)');
    expect(ctx.manager.store.metrics(job.id, ['env/avg_regret']).map((p) => p.step)).toEqual([1, 2]);
    await waitFor('environments linked to the Ray job', () => (ctx.db.prepare('SELECT COUNT(*) AS n FROM env_sources WHERE job_id = ?').get(job.id) as { n: number }).n > 0);
  });

  it('keeps secrets out of runtime_env, GET /api/jobs/, ps and every log', async () => {
    const marker = `secretjob${Date.now()}`;
    const spec = buildSpec({
      name: 'ray head secret',
      backend: 'ray',
      ray: { address: ray!.address },
      workdir: tmp.dir,
      // The job proves it got the value by its hash: the value itself is on no command line.
      command: ['sh', '-c', `echo "got $(printf %s "$WANDB_API_KEY" | sha256sum | cut -c1-16)"; sleep 3; echo ${marker}`],
      secretEnv: ['WANDB_API_KEY'],
      poolDir: null,
      importEnvironments: false,
    });
    const job = await ctx.manager.submit(spec);
    await waitState(ctx.manager, job.id, ['running']);
    // While it runs: no process shows the value, and the head's job list does not hold it.
    expect(execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' })).not.toContain(SECRET);
    const listing = await rayRest(ray!.address, 'GET', '/api/jobs/');
    expect(listing.status).toBe(200);
    expect(listing.text).toContain(job.externalId!);
    expect(listing.text).not.toContain(SECRET);
    const done = await waitState(ctx.manager, job.id, ['succeeded', 'failed', 'lost', 'cancelled']);
    expect(done.state, done.detail).toBe('succeeded');
    expect(ctx.manager.readLog(job.id, 0, 1 << 20).text).toContain(`got ${createHash('sha256').update(SECRET).digest('hex').slice(0, 16)}`);
    expect((await rayRest(ray!.address, 'GET', `/api/jobs/${job.externalId}/logs`)).text).not.toContain(SECRET);
    // The private file that carried it was removed when the job started.
    expect(existsSync(join(tmp.dir, '.spade_workbench', job.id, 'secrets.env'))).toBe(false);
    expect(filesContaining(tmp.dir, SECRET)).toEqual([]);
    expect(ray!.tmp ? filesContaining(join(ray!.tmp, 'session_latest', 'logs'), SECRET) : []).toEqual([]);
  });

  it('follows a running job live, and stop waits for STOPPED and leaves no process behind', async () => {
    const gate = join(tmp.dir, 'gate-live');
    const marker = `stopjob${Date.now()}`;
    const job = await ctx.manager.submit(
      buildSpec({
        name: 'ray head live',
        backend: 'ray',
        ray: { address: ray!.address },
        workdir: tmp.dir,
        command: ['sh', '-c', `i=1; while [ $i -le 30 ]; do echo "rollout $i: live"; i=$((i+1)); done; while [ ! -e ${gate} ]; do sleep 0.1; done; echo ${marker}; exec sleep 300`],
        poolDir: null,
        importEnvironments: false,
      }),
    );
    await waitFor('the first lines while the job runs', () => rolloutLines(ctx.manager.readLog(job.id, 0, 1 << 20).text).length === 30);
    expect(ctx.manager.get(job.id).state).toBe('running');
    writeFileSync(gate, '');
    await waitFor('the line after the gate', () => ctx.manager.readLog(job.id, 0, 1 << 20).text.includes(marker));
    const stopped = await ctx.manager.stop(job.id);
    expect(stopped.state, stopped.detail).toBe('cancelled');
    expect(stopped.detail).toMatch(/STOPPED/);
    await waitFor('the driver to be gone', () => processesWith(`echo ${marker}`).length === 0, 20_000);
    // Removing it deletes it on the head too.
    await ctx.manager.remove(job.id);
    expect((await rayRest(ray!.address, 'GET', `/api/jobs/${stopped.externalId}`)).status).toBe(404);
  });

  it('attaches to a job it did not submit, by its submission id', async () => {
    const id = `spade_games_8b_${process.pid}_${Date.now() % 100000}`;
    const sub = await rayRest(ray!.address, 'POST', '/api/jobs/', {
      entrypoint: `sleep 2; for s in 1 2; do echo "rollout $s: {'rollout/actor_win_rate': 0.$s}"; done; exit 1`,
      submission_id: id,
    });
    expect(sub.status, sub.text).toBe(200);
    const job = await ctx.manager.attach({ name: 'spade 8b (attached)', backend: 'ray', externalId: id, ray: { address: ray!.address } });
    expect(job.externalId).toBe(id);
    const done = await waitState(ctx.manager, job.id, ['succeeded', 'failed', 'lost', 'cancelled']);
    expect(done.state, done.detail).toBe('failed');
    expect(ctx.manager.store.metrics(job.id, ['rollout/actor_win_rate']).map((p) => [p.step, p.value])).toEqual([[1, 0.1], [2, 0.2]]);
    await expect(ctx.manager.attach({ name: 'nothing', backend: 'ray', externalId: 'spade_games_8b_0', ray: { address: ray!.address } })).rejects.toThrow(/does not know/);
  });

  it("stops an attached job only when confirmed, and says what the Ray head answered, not a launch script's fate", async () => {
    const id = `spade_games_8b_${process.pid}_stop_${Date.now() % 100000}`;
    const sub = await rayRest(ray!.address, 'POST', '/api/jobs/', { entrypoint: 'echo started; sleep 300', submission_id: id });
    expect(sub.status, sub.text).toBe(200);
    cleanups.push(() => rayRest(ray!.address, 'POST', `/api/jobs/${id}/stop`).then(() => undefined));
    const job = await ctx.manager.attach({ name: 'someone else\'s run', backend: 'ray', externalId: id, ray: { address: ray!.address } });
    expect(job.spec.owner).toMatch(new RegExp(`^Ray job ${id} on the head at ${ray!.address}, submitted outside this workbench.*sleep 300`));
    await waitState(ctx.manager, job.id, ['running']);
    // Without the confirmation nothing is asked of Ray: the job runs on.
    await expect(ctx.manager.stop(job.id)).rejects.toThrow(/did not launch it: confirm/);
    expect(JSON.parse((await rayRest(ray!.address, 'GET', `/api/jobs/${id}`)).text).status).toBe('RUNNING');
    const stopped = await ctx.manager.stop(job.id, { confirmAttached: true });
    expect(stopped.state).toBe('cancelled');
    expect(stopped.stopAnswer).toMatch(new RegExp(`^ray job ${id}: STOPPED.*; Ray answered POST /api/jobs/${id}/stop with HTTP 200 \\{"stopped": ?true\\}`));
    expect(stopped.detail).toContain(stopped.stopAnswer);
    expect(stopped.detail).not.toMatch(/process group|launch script/);
    expect(JSON.parse((await rayRest(ray!.address, 'GET', `/api/jobs/${id}`)).text).status).toBe('STOPPED');
  });

  it('reports the outcome of a job whose log the head cannot decode (invalid UTF-8), and says why the log stops', async () => {
    const job = await ctx.manager.submit(
      buildSpec({
        name: 'ray head bad bytes',
        backend: 'ray',
        ray: { address: ray!.address },
        workdir: tmp.dir,
        command: ['sh', '-c', `printf 'before\\n'; sleep 2; printf 'line \\377\\376 caf\\303\\251\\n'; echo bytes-done; exit 4`],
        poolDir: null,
        importEnvironments: false,
      }),
    );
    // Ray 2.60's GET /logs answers HTTP 500 UnicodeDecodeError for such a log: the job still ends here.
    const done = await waitState(ctx.manager, job.id, ['succeeded', 'failed', 'lost', 'cancelled']);
    expect(done.state, done.detail).toBe('failed');
    expect(done.exitCode).toBe(4);
    expect(done.detail).toMatch(/FAILED.*the log could not be read to its end: .*UnicodeDecodeError/);
  });
});

(ray ? describe : describe.skip)('ray backend against a real Ray head in token mode (RAY_AUTH_MODE=token)', () => {
  it('submits, tails and stops with the bearer token, and a missing token is an error', async () => {
    const TOKEN = randomBytes(16).toString('hex');
    const dash = await freePort();
    const rayTmp = `/tmp/rt${randomBytes(3).toString('hex')}`;
    // Its own process group, so the test can end every daemon of this head.
    const head = spawn(
      join(ray!.bin, 'ray'),
      ['start', '--head', `--port=${await freePort()}`, '--dashboard-host=127.0.0.1', `--dashboard-port=${dash}`, `--dashboard-agent-listen-port=${await freePort()}`,
        '--num-cpus=1', '--num-gpus=0', '--object-store-memory=100000000', '--disable-usage-stats', `--temp-dir=${rayTmp}`],
      { detached: true, stdio: 'ignore', env: { ...process.env, RAY_ADDRESS: '', RAY_AUTH_MODE: 'token', RAY_AUTH_TOKEN: TOKEN } },
    );
    const address = `http://127.0.0.1:${dash}`;
    const tmp = tempDir('spade-jobs-raytoken-');
    const secrets = new MemorySecretStore();
    secrets.set('RAY_TOKEN', TOKEN);
    const ctx = makeManager(tmp.dir, { secrets });
    try {
      await waitFor('the token head to answer', async () => (await rayRest(address, 'GET', '/api/version').catch(() => ({ status: 0 }))).status > 0, 120_000);
      const spec = buildSpec({
        name: 'token job',
        backend: 'ray',
        ray: { address, tokenSecret: 'RAY_TOKEN' },
        workdir: tmp.dir,
        command: ['sh', '-c', `for s in 1 2; do echo "rollout $s: {'env/avg_regret': 0.$s}"; sleep 0.5; done`],
        poolDir: null,
        importEnvironments: false,
      });
      const job = await ctx.manager.submit(spec);
      const done = await waitState(ctx.manager, job.id, ['succeeded', 'failed', 'lost', 'cancelled'], 120_000);
      expect(done.state, done.detail).toBe('succeeded');
      expect(ctx.manager.store.metrics(job.id, ['env/avg_regret']).map((p) => p.value)).toEqual([0.1, 0.2]);
      // Without the token the head refuses, and the refusal is an error, not a job state.
      expect((await rayRest(address, 'GET', '/api/jobs/')).status).toBe(401);
      await expect(ctx.manager.submit({ ...spec, name: 'no token', ray: { address } })).rejects.toThrow(/HTTP 40[13]/);
      const long = await ctx.manager.submit({ ...spec, name: 'token long', command: ['sleep', '300'] });
      await waitState(ctx.manager, long.id, ['running'], 60_000);
      expect((await ctx.manager.stop(long.id)).state).toBe('cancelled');
    } finally {
      await ctx.manager.close();
      ctx.db.close();
      tmp.cleanup();
      try {
        process.kill(-head.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
      await waitFor('the token head to end', () => processesWith(rayTmp).length === 0, 30_000).catch(() => undefined);
      rmSync(rayTmp, { recursive: true, force: true });
    }
  }, 240_000);
});
