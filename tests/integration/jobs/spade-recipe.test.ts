import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSpec, type LaunchRequest } from '../../../core/jobs/launch';
import { MemorySecretStore } from '../../../core/jobs/secrets';
import type { JobRecord } from '../../../core/jobs/types';
import { tempDir } from '../../helpers/tmp';
import { ciRay, ciServices, makeManager, rayRest, waitFor, waitState } from './helpers';

const ray = ciRay();
const ci = ciServices();
const CHECKOUT = join(__dirname, 'spade-checkout');
const ENDED: JobRecord['state'][] = ['succeeded', 'failed', 'lost', 'cancelled'];

function processesWith(needle: string): string[] {
  return execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(needle) && !/\bps -eo\b/.test(l));
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/**
 * SPADE's games recipe, launched as a user would, against a SPADE-shaped checkout whose
 * cmd/games/train_spade_8b.sh submits a small trainer to the real Ray head (.ci/services.sh).
 */
(ray ? describe : describe.skip)('the SPADE games recipe on a SPADE-shaped checkout and a real Ray head', () => {
  let tmp: ReturnType<typeof tempDir>;
  let ctx: ReturnType<typeof makeManager>;
  let checkout: string;
  const KEY = `wandb-${randomBytes(8).toString('hex')}`;
  const port = (): string => new URL(ray!.address).port || '8265';
  const request = (name: string, extra: Partial<LaunchRequest> & { env?: Record<string, string> } = {}): LaunchRequest => ({
    name,
    backend: 'local',
    recipe: 'spade-games-8b',
    workdir: checkout,
    ray: { address: ray!.address },
    secretEnv: ['WANDB_API_KEY'],
    poolDir: null,
    importEnvironments: false,
    ...extra,
    env: { WANDB_ENTITY: 'ci-team', CORPUS_FILE: '', PATH: `${ray!.bin}:/usr/local/bin:/usr/bin:/bin`, STANDIN_DASHBOARD_PORT: port(), ...extra.env },
  });

  beforeAll(() => {
    tmp = tempDir('spade-jobs-recipe-');
    checkout = join(tmp.dir, 'spade');
    cpSync(CHECKOUT, checkout, { recursive: true });
    const secrets = new MemorySecretStore();
    secrets.set('WANDB_API_KEY', KEY);
    ctx = makeManager(tmp.dir, { secrets });
  });
  afterAll(async () => {
    await ctx.manager.close();
    ctx.db.close();
    tmp.cleanup();
  });

  it('takes the outcome from the Ray job, not from `ray job logs --follow`, and charts the printed dicts', async () => {
    const ok = await ctx.manager.submit(buildSpec(request('spade 8b ok')));
    const bad = await ctx.manager.submit(buildSpec(request('spade 8b fails', { env: { STANDIN_FAIL: '1' } })));
    const done = await waitState(ctx.manager, ok.id, ENDED, 120_000);
    expect(done.state, done.detail).toBe('succeeded');
    expect(done.spec.ray?.submissionId).toMatch(/^spade_games_8b_\d+$/);
    expect(done.detail).toMatch(/SUCCEEDED/);
    expect(ctx.manager.store.metrics(ok.id, ['rollout/mean_return']).map((p) => [p.step, p.value])).toEqual([[0, 0.25], [1, 0.5], [2, 0.75]]);
    for (const k of ['rollout/actor_win_rate', 'rollout/num_failed', 'env/avg_regret', 'env_validation_pass_rate']) expect(ctx.manager.store.metricKeys(ok.id)).toContain(k);
    // The run wrote into its own folder, not a folder shared with other runs.
    expect(readFileSync(join(checkout, '.spade_workbench', ok.id, 'job.sh'), 'utf8')).toContain(`OUTPUT_DIR=${join(checkout, '.spade_workbench', ok.id, 'run')}`);

    const failed = await waitState(ctx.manager, bad.id, ENDED, 120_000);
    // The script itself ended well: `ray job logs --follow` exits 0 whatever the job did.
    expect(readFileSync(join(checkout, '.spade_workbench', bad.id, 'exit_code'), 'utf8').trim()).toBe('0');
    expect(failed.state, failed.detail).toBe('failed');
    expect(failed.detail).toMatch(/FAILED/);
    expect(ctx.manager.store.metrics(bad.id, ['rollout/mean_return']).map((p) => p.step)).toEqual([0, 1]);
    // The key reached the script only through its environment.
    expect((await rayRest(ray!.address, 'GET', '/api/jobs/')).text).not.toContain(KEY);
    expect(ctx.manager.readLog(ok.id, 0, 1 << 20).text).not.toContain(KEY);
  }, 180_000);

  it('stop ends the Ray job, then the script and the Ray head it started: no Ray process is left', async () => {
    const dash = await freePort();
    const rayTmp = `/tmp/sr${randomBytes(3).toString('hex')}`;
    const job = await ctx.manager.submit(
      buildSpec(
        request('spade 8b own head', {
          ray: { address: `http://127.0.0.1:${dash}` },
          env: { STANDIN_START_HEAD: '1', STANDIN_DASHBOARD_PORT: String(dash), STANDIN_GCS_PORT: String(await freePort()), STANDIN_AGENT_PORT: String(await freePort()), STANDIN_RAY_TMP: rayTmp, STANDIN_HOLD: '1' },
        }),
      ),
    );
    try {
      await waitFor('the trainer to hold', () => ctx.manager.readLog(job.id, 0, 1 << 20).text.includes('holding until stopped'), 150_000);
    } catch (e) {
      await ctx.manager.stop(job.id);
      throw e;
    }
    expect(processesWith(rayTmp).length).toBeGreaterThan(0);
    const sub = ctx.manager.get(job.id).spec.ray?.submissionId;
    expect(sub).toMatch(/^spade_games_8b_\d+$/);
    const stopped = await ctx.manager.stop(job.id);
    expect(stopped.state, stopped.detail).toBe('cancelled');
    expect(stopped.detail).toMatch(new RegExp(`stopped by the user: ray job ${sub}: STOPPED`));
    await waitFor('every process of the Ray head it started to end', () => processesWith(rayTmp).length === 0, 30_000);
    // Its agents rename themselves (ray::DashboardAgent): the script's process group must be empty too.
    const pgid = job.externalId!.split(':')[0]!;
    expect(execFileSync('ps', ['-eo', 'pgid=,args='], { encoding: 'utf8' }).split('\n').filter((l) => l.trim().split(/\s+/)[0] === pgid)).toEqual([]);
    expect(processesWith('train_spade_slime_standin.py').filter((l) => l.includes(job.id))).toEqual([]);
    rmSync(rayTmp, { recursive: true, force: true });
  }, 240_000);
});

(ray && ci ? describe : describe.skip)('the SPADE games recipe over SSH (real sshd, real Ray head)', () => {
  it('reports success and failure from Ray, and stop ends the Ray job', async () => {
    const tmp = tempDir('spade-jobs-recipe-ssh-');
    const checkout = join(tmp.dir, 'spade');
    cpSync(CHECKOUT, checkout, { recursive: true });
    const secrets = new MemorySecretStore();
    secrets.set('WANDB_API_KEY', `wandb-${randomBytes(8).toString('hex')}`);
    const ctx = makeManager(tmp.dir, { secrets });
    const ssh = { host: ci!.host, port: ci!.port, user: ci!.user, identityFile: ci!.key, knownHostsFile: ci!.knownHosts };
    const port = new URL(ray!.address).port || '8265';
    const req = (name: string, env: Record<string, string> = {}): LaunchRequest => ({
      name,
      backend: 'ssh',
      ssh,
      recipe: 'spade-games-8b',
      workdir: checkout,
      // The head as the SSH host reaches it; the workbench asks it through a tunnel.
      ray: { address: ray!.address },
      secretEnv: ['WANDB_API_KEY'],
      poolDir: null,
      importEnvironments: false,
      env: { WANDB_ENTITY: 'ci-team', CORPUS_FILE: '', PATH: `${ray!.bin}:/usr/local/bin:/usr/bin:/bin`, STANDIN_DASHBOARD_PORT: port, ...env },
    });
    try {
      const ok = await ctx.manager.submit(buildSpec(req('ssh spade ok')));
      const bad = await ctx.manager.submit(buildSpec(req('ssh spade fails', { STANDIN_FAIL: '1' })));
      const held = await ctx.manager.submit(buildSpec(req('ssh spade held', { STANDIN_HOLD: '1' })));
      expect((await waitState(ctx.manager, ok.id, ENDED, 120_000)).state).toBe('succeeded');
      const failed = await waitState(ctx.manager, bad.id, ENDED, 120_000);
      expect(failed.state, failed.detail).toBe('failed');
      expect(ctx.manager.store.metrics(ok.id, ['env/avg_regret']).map((p) => p.step)).toEqual([0, 1, 2]);
      await waitFor('the held trainer', () => ctx.manager.readLog(held.id, 0, 1 << 20).text.includes('holding until stopped'), 120_000);
      const sub = ctx.manager.get(held.id).spec.ray!.submissionId!;
      const stopped = await ctx.manager.stop(held.id);
      expect(stopped.state, stopped.detail).toBe('cancelled');
      expect(stopped.detail).toContain(`ray job ${sub}: STOPPED`);
      expect(JSON.parse((await rayRest(ray!.address, 'GET', `/api/jobs/${sub}`)).text).status).toBe('STOPPED');
      await waitFor('the driver to end', () => processesWith('train_spade_slime_standin.py').filter((l) => l.includes(held.id)).length === 0, 30_000);
    } finally {
      await ctx.manager.close();
      ctx.db.close();
      tmp.cleanup();
    }
  }, 300_000);
});

(ray && ci?.slurm ? describe : describe.skip)('the SPADE games recipe on Slurm (real sbatch, real Ray head)', () => {
  it('reports success and failure from Ray, and stop ends the Ray job before scancel', async () => {
    const tmp = tempDir('spade-jobs-recipe-slurm-');
    const checkout = join(tmp.dir, 'spade');
    cpSync(CHECKOUT, checkout, { recursive: true });
    const secrets = new MemorySecretStore();
    secrets.set('WANDB_API_KEY', `wandb-${randomBytes(8).toString('hex')}`);
    const ctx = makeManager(tmp.dir, { secrets });
    const ssh = { host: ci!.host, port: ci!.port, user: ci!.user, identityFile: ci!.key, knownHostsFile: ci!.knownHosts };
    const port = new URL(ray!.address).port || '8265';
    const req = (name: string, env: Record<string, string> = {}): LaunchRequest => ({
      name,
      backend: 'slurm',
      ssh,
      recipe: 'spade-games-8b',
      workdir: checkout,
      // The one-node CI cluster has no GPUs and little memory: the recipe's 8 GPUs / 64 CPUs / 1900G are overridden.
      slurm: { gpus: 0, cpusPerTask: 1, mem: '500M', time: '00:10:00' },
      ray: { address: ray!.address },
      secretEnv: ['WANDB_API_KEY'],
      poolDir: null,
      importEnvironments: false,
      env: { WANDB_ENTITY: 'ci-team', CORPUS_FILE: '', PATH: `${ray!.bin}:/usr/local/bin:/usr/bin:/bin`, STANDIN_DASHBOARD_PORT: port, ...env },
    });
    try {
      const ok = await ctx.manager.submit(buildSpec(req('slurm spade ok')));
      const bad = await ctx.manager.submit(buildSpec(req('slurm spade fails', { STANDIN_FAIL: '1' })));
      const done = await waitState(ctx.manager, ok.id, ENDED, 180_000);
      expect(done.state, done.detail).toBe('succeeded');
      expect(readFileSync(join(checkout, '.spade_workbench', ok.id, 'job.sh'), 'utf8')).toMatch(/#SBATCH --cpus-per-task=1\n#SBATCH --mem=500M/);
      const failed = await waitState(ctx.manager, bad.id, ENDED, 180_000);
      expect(failed.state, failed.detail).toBe('failed');
      expect(failed.detail).toMatch(/ray job spade_games_8b_\d+: FAILED/);
      expect(ctx.manager.store.metrics(ok.id, ['env/avg_regret']).map((p) => p.step)).toEqual([0, 1, 2]);
      const held = await ctx.manager.submit(buildSpec(req('slurm spade held', { STANDIN_HOLD: '1' })));
      await waitFor('the held trainer', () => ctx.manager.readLog(held.id, 0, 1 << 20).text.includes('holding until stopped'), 180_000);
      const sub = ctx.manager.get(held.id).spec.ray!.submissionId!;
      const stopped = await ctx.manager.stop(held.id);
      expect(stopped.state, stopped.detail).toBe('cancelled');
      expect(stopped.detail).toContain(`ray job ${sub}: STOPPED`);
      expect(stopped.detail).toContain('scancel');
      await waitFor('the driver to end', () => processesWith('train_spade_slime_standin.py').filter((l) => l.includes(held.id)).length === 0, 30_000);
    } finally {
      await ctx.manager.close();
      ctx.db.close();
      tmp.cleanup();
    }
  }, 400_000);
});
