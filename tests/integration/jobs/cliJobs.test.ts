import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobArtefacts } from '../../../core/api/calls/jobs';
import { SshConnection } from '../../../core/jobs/ssh/connection';
import { tempDir } from '../../helpers/tmp';
import { ciRay, ciServices, filesContaining, rayRest, SERVICES_MISSING, waitFor } from './helpers';
import { writeStandIn8b } from './standIn8b';

/**
 * The jobs CLI as a user runs it (bin/spade-workbench.mjs, a process per command, one data folder):
 * launch, stop, artefacts and continue of real local processes, and attach/stop/artefacts of a job
 * on the real Slurm of .ci/run over its sshd.
 */
const bin = join(process.cwd(), 'bin', 'spade-workbench.mjs');
const FIX = join(process.cwd(), 'tests', 'fixtures', 'eval-offline');
const KEY = `wandb-${randomBytes(8).toString('hex')}`;

describe('the jobs CLI', () => {
  let tmp: ReturnType<typeof tempDir>;
  let data: string;
  let checkout: string;
  const cli = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [bin, ...args, '--data-dir', data], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, WANDB_API_KEY: KEY, ...env } });
  const json = <T,>(args: string[], env: Record<string, string> = {}): T => {
    const r = cli([...args, '--json'], env);
    expect(r.status, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as T;
  };
  const state = (id: string): string => json<{ id: string; state: string }[]>(['jobs', 'list']).find((j) => j.id === id)?.state ?? 'missing';
  const launch8b = (env: Record<string, string> = {}): string => {
    const r = cli(['jobs', 'launch', 'spade-games-8b', '--workdir', checkout, '--env', 'WANDB_ENTITY=ci-team', '--env', 'CORPUS_FILE=', '--name', 'cli 8b'], env);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toMatch(/^j[0-9a-z]+$/);
    return r.stdout.trim();
  };

  beforeAll(() => {
    tmp = tempDir('spade-jobs-cli-');
    data = join(tmp.dir, 'data');
    checkout = join(tmp.dir, 'spade');
    writeStandIn8b(checkout);
  });
  afterAll(() => tmp.cleanup());

  it('refuses an unknown recipe, target or variable, and a secret on the command line, with what it takes', () => {
    const bad = (args: string[], re: RegExp) => {
      const r = cli(['jobs', 'launch', ...args]);
      expect(r.status, r.stdout).toBe(2);
      expect(r.stderr).toMatch(re);
    };
    bad(['spade-games-9b'], /Unknown recipe spade-games-9b; the recipes are: .*spade-games-8b/);
    bad(['example-run', '--on', 'mars:host'], /--on must be local, ssh:HOST, slurm:HOST or ray:\/\/HOST:PORT .*got mars:host/);
    bad(['spade-games-8b', '--env', 'NUM_ROLLOUTS=3'], /Recipe spade-games-8b does not read NUM_ROLLOUTS \(cmd\/games\/train_spade_8b.sh never does\); it reads: .*LOAD_DIR/);
    bad(['spade-games-8b', '--env', `WANDB_API_KEY=${KEY}`], /WANDB_API_KEY is a secret: set it in this command's environment/);
    bad(['spade-games-8b', '--env', 'NOEQUALS'], /--env takes NAME=VALUE/);
    bad(['design-round', '--on', 'ray://127.0.0.1:8265'], /Recipe design-round runs on local, ssh, slurm, not ray/);
    expect(json<unknown[]>(['jobs', 'list'])).toEqual([]);
  });

  it('launches a recipe as a detached local process that outlives the command, and stops its whole process group', async () => {
    const id = launch8b({ STANDIN_SLEEP: '600' });
    const job = json<{ id: string; state: string; externalId: string }[]>(['jobs', 'list']).find((j) => j.id === id)!;
    expect(job.state).toBe('running');
    const pid = Number(job.externalId.split(':')[0]);
    // The launching command has exited; the job runs on in its own process group.
    expect(() => process.kill(-pid, 0)).not.toThrow();
    await waitFor('the stand-in to sleep', () => execFileSync('ps', ['-o', 'args=', '-g', String(pid)], { encoding: 'utf8' }).includes('sleep 600'));
    const stop = cli(['jobs', 'stop', id]);
    expect(stop.status, stop.stderr).toBe(0);
    expect(stop.stdout).toMatch(new RegExp(`^${id} cancelled: SIGTERM to process group ${pid}`));
    expect(() => process.kill(-pid, 0)).toThrow();
    expect(state(id)).toBe('cancelled');
    // The log was drained on the way out; the key reached the script only through its environment.
    const logs = cli(['jobs', 'logs', id]);
    expect(logs.stdout).toContain('[stand-in] sleeping');
    expect(filesContaining(data, KEY)).toEqual([]);
  });

  it("lists a run's checkpoints and offline evaluations, then continues it from its save folder (LOAD_DIR)", async () => {
    const id = launch8b();
    // `jobs logs --follow` follows the job from this process until it ends.
    const follow = cli(['jobs', 'logs', id, '--follow']);
    expect(follow.status, follow.stderr).toBe(0);
    expect(follow.stdout).toContain('[stand-in] done');
    expect(state(id)).toBe('succeeded');
    const run = join(checkout, '.spade_workbench', id, 'run');
    // eval_offline --output-dir under the run's folder, the files SPADE's own code wrote; and a hostile neighbour.
    for (const it of ['iter_0000015', 'iter_0000031']) cpSync(join(FIX, it, 'results.json'), join(run, 'offline_eval', it, 'results.json'));
    mkdirSync(join(run, 'offline_eval', 'broken'), { recursive: true });
    writeFileSync(join(run, 'offline_eval', 'broken', 'results.json'), '{"ckpt": "x", "metrics": ');
    mkdirSync(join(run, 'offline_eval', 'fifo'), { recursive: true });
    execFileSync('mkfifo', [join(run, 'offline_eval', 'fifo', 'results.json')]);
    writeFileSync(join(run, 'spade_games_cache', 'env_memory.json'), '[]');
    // A save folder whose tracker is not written yet: its checkpoint is listed, nothing continues from it.
    mkdirSync(join(run, 'partial', 'iter_0000007'), { recursive: true });
    writeFileSync(join(run, 'partial', 'iter_0000007', 'common.pt'), 'x');

    const a = json<JobArtefacts>(['jobs', 'artefacts', id]);
    const save = join(run, 'Qwen3-8B_games_blend_thinking');
    expect(a.runDir).toBe(run);
    expect(a.saveDirs).toHaveLength(2);
    expect(a.saveDirs).toEqual(expect.arrayContaining([
      { path: save, kind: 'megatron', latest: 31, tracker: '31', checkpoints: 2 },
      { path: join(run, 'partial'), kind: 'megatron', latest: null, tracker: null, checkpoints: 1 },
    ]));
    expect(a.checkpoints.map((c) => [c.step, c.latest, c.path]).sort()).toEqual([[15, false, join(save, 'iter_0000015')], [31, true, join(save, 'iter_0000031')], [7, false, join(run, 'partial', 'iter_0000007')]]);
    expect(a.evals.map((e) => [e.step, e.suites.map((s) => s.name)])).toEqual([
      [15, ['aime', 'gpqa_diamond', 'livecodebench', 'gem']],
      [31, ['aime', 'gpqa_diamond', 'livecodebench', 'gem']],
    ]);
    expect(a.evals[1]!.suites[0]!.metrics.aime2026_pass1).toBeNull();
    expect(a.problems.map((p) => p.path).sort()).toEqual([join(run, 'offline_eval', 'broken', 'results.json'), join(run, 'offline_eval', 'fifo', 'results.json')]);
    expect(a.continuable).toEqual({ loadDir: save, step: 31 });
    const text = cli(['jobs', 'artefacts', id]);
    expect(text.stdout).toMatch(/step {2}31 {2}latest/);
    expect(text.stdout).toMatch(/aime {2}aime2025_pass1 +0\.2125 +0\.2604/);

    // Without the secret in its environment the continuation says so, and launches nothing.
    const noKey = spawnSync(process.execPath, [bin, 'jobs', 'continue', id, '--data-dir', data], { encoding: 'utf8', env: { ...process.env, WANDB_API_KEY: '' } });
    expect(noKey.status).toBe(2);
    expect(noKey.stderr).toContain('launched with the secret WANDB_API_KEY');
    const next = cli(['jobs', 'continue', id, '--follow']);
    expect(next.status, next.stderr).toBe(0);
    const nextId = next.stdout.split('\n')[0]!.trim();
    expect(next.stdout).toContain(`[stand-in] LOAD_DIR=${save} latest=31`);
    expect(next.stdout).toContain(`[MEMORY] Seeded env memory from ${join(run, 'spade_games_cache', 'env_memory.json')}`);
    const cont = json<{ id: string; name: string; recipe: string; state: string }[]>(['jobs', 'list']).find((j) => j.id === nextId)!;
    expect(cont).toMatchObject({ name: 'cli 8b (from step 31)', recipe: 'spade-games-8b', state: 'succeeded' });
    // A running job or a folder that is not this run's save folder is refused.
    const wrong = cli(['jobs', 'continue', id, '--load', '/etc']);
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toContain('/etc is not a save folder of this run');
    expect(filesContaining(data, KEY)).toEqual([]);
  });

  const ray = ciRay();
  it.skipIf(!ray)(`attaches to a Ray job by its submission id and stops it only with --yes${ray ? '' : ' (skipped: no Ray head: .ci/services.sh start-ray)'}`, async () => {
    const sub = `spade_games_8b_${process.pid}_cli_attach`;
    const made = await rayRest(ray!.address, 'POST', '/api/jobs/', { entrypoint: 'echo someone else; sleep 300', submission_id: sub });
    expect(made.status, made.text).toBe(200);
    const rayStatus = async () => (JSON.parse((await rayRest(ray!.address, 'GET', `/api/jobs/${sub}`)).text) as { status: string }).status;
    try {
      const on = `ray://${new URL(ray!.address).host}`;
      const att = cli(['jobs', 'attach', sub, '--on', on]);
      expect(att.status, att.stderr).toBe(0);
      const id = att.stdout.trim();
      // Attached without --output-dir: it has no folder to read, and says so.
      const a = json<JobArtefacts>(['jobs', 'artefacts', id]);
      expect(a.note).toBe('This job names no run folder (no OUTPUT_DIR, no outputs).');
      const refused = cli(['jobs', 'stop', id]);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain(`Not stopped: Ray job ${sub} on the head at ${ray!.address}, submitted outside this workbench`);
      expect(await rayStatus()).not.toMatch(/STOPPED|FAILED|SUCCEEDED/);
      const stopped = cli(['jobs', 'stop', id, '--yes']);
      expect(stopped.status, stopped.stderr).toBe(0);
      expect(stopped.stdout).toMatch(new RegExp(`Ray answered POST /api/jobs/${sub}/stop with HTTP 200`));
      await waitFor('Ray to stop the job', async () => (await rayStatus()) === 'STOPPED');
    } finally {
      await rayRest(ray!.address, 'POST', `/api/jobs/${sub}/stop`).catch(() => undefined);
    }
  });

  const ci = ciServices();
  it.skipIf(!ci?.slurm)(`attaches to a Slurm job it did not launch, reads its run folder over SSH, and stops it only with --yes${ci?.slurm ? '' : ` (skipped: ${SERVICES_MISSING})`}`, async () => {
    const target = { host: ci!.host, port: ci!.port, user: ci!.user, identityFile: ci!.key, knownHostsFile: ci!.knownHosts };
    const ssh = new SshConnection(target, { appKnownHosts: join(tmp.dir, 'no_known_hosts'), configText: '' });
    const on = ['--on', `slurm:${ci!.user}@${ci!.host}:${ci!.port}`, '--ssh-key', ci!.key, '--known-hosts', ci!.knownHosts];
    let slurmId = '';
    try {
      const out = join(tmp.dir, 'someone-else');
      const sub = await ssh.exec(`mkdir -p ${out} && cd ${out} && sbatch --parsable --job-name=not-ours --output=${out}/slurm.out --wrap 'echo started; sleep 300'`);
      slurmId = sub.stdout.trim().split(';')[0]!;
      expect(slurmId, sub.stderr).toMatch(/^\d+$/);
      // Its run folder, in SPADE's layout, on the submit host's file system.
      const save = join(out, 'run', 'Qwen3-4B-Instruct-2507_games_blend');
      mkdirSync(join(save, 'iter_0000047'), { recursive: true });
      writeFileSync(join(save, 'latest_checkpointed_iteration.txt'), '47\n');
      cpSync(join(FIX, 'iter_0000015', 'results.json'), join(out, 'run', 'eval', 'results.json'));

      const att = cli(['jobs', 'attach', slurmId, ...on, '--output-dir', join(out, 'run'), '--name', 'not ours']);
      expect(att.status, att.stderr).toBe(0);
      const id = att.stdout.trim();
      expect(id).toMatch(/^j[0-9a-z]+$/);
      const a = json<JobArtefacts>(['jobs', 'artefacts', id]);
      expect(a.checkpoints.map((c) => [c.step, c.latest, c.path])).toEqual([[47, true, join(save, 'iter_0000047')]]);
      expect(a.evals.map((e) => e.step)).toEqual([15]);
      expect(a.continuable).toBeNull();
      expect(a.continueNote).toContain('did not launch this run');

      const refused = cli(['jobs', 'stop', id]);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toMatch(new RegExp(`Not stopped: Slurm job ${slurmId} on .*owned by ${ci!.user}\\. The workbench did not launch it\\. Pass --yes to stop it\\.`));
      expect((await ssh.exec(`scontrol show job ${slurmId}`)).stdout).toMatch(/JobState=(RUNNING|PENDING)/);
      const stopped = cli(['jobs', 'stop', id, '--yes']);
      expect(stopped.status, stopped.stderr).toBe(0);
      expect(stopped.stdout).toMatch(new RegExp(`scancel ${slurmId} exited 0`));
      await waitFor('Slurm to end the job', async () => !/JobState=(RUNNING|PENDING)/.test((await ssh.exec(`scontrol show job ${slurmId}`)).stdout));
    } finally {
      if (/^\d+$/.test(slurmId)) await ssh.exec(`scancel ${slurmId}`).catch(() => undefined);
      ssh.close();
    }
  });
});
