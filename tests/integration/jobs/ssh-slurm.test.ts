import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { buildSpec } from '../../../core/jobs/launch';
import { MemorySecretStore } from '../../../core/jobs/secrets';
import type { SshTarget } from '../../../core/jobs/types';
import { tempDir } from '../../helpers/tmp';
import { ciServices, filesContaining, makeManager, rolloutLines, SERVICES_MISSING, waitFor, waitState } from './helpers';

const ci = ciServices();
if (!ci) console.warn(`[jobs ssh/slurm tests skipped] ${SERVICES_MISSING}`);
const d = ci ? describe : describe.skip;

function target(extra: Partial<SshTarget> = {}): SshTarget {
  return { host: ci!.host, port: ci!.port, user: ci!.user, identityFile: ci!.key, knownHostsFile: ci!.knownHosts, ...extra };
}

d('ssh host keys', () => {
  it('shows an unknown key with its fingerprint, connects only after it is accepted, refuses a changed key', async () => {
    const tmp = tempDir('spade-jobs-hostkey-');
    const { db, manager } = makeManager(tmp.dir);
    try {
      const bare = target({ knownHostsFile: join(tmp.dir, 'empty_known_hosts') });
      const first = await manager.probeHost(bare);
      expect(first.status).toBe('unknown');
      const expected = execFileSync('ssh-keygen', ['-lf', ci!.knownHosts.replace(/known_hosts$/, 'host_ed25519.pub')], { encoding: 'utf8' }).split(' ')[1];
      if (first.status === 'unknown') {
        expect(first.fingerprint).toBe(expected);
        expect(() => manager.trustHostKey(first.host, first.port, 'SHA256:not-the-one-shown')).toThrow(/No pending host key/);
        manager.trustHostKey(first.host, first.port, first.fingerprint);
      }
      expect((await manager.probeHost(bare)).status).toBe('trusted');

      // A known_hosts entry with another key for the same name: refused, whatever was trusted before.
      const other = join(tmp.dir, 'other');
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other]);
      const changedFile = join(tmp.dir, 'changed_known_hosts');
      writeFileSync(changedFile, `[${ci!.host}]:${ci!.port} ${readFileSync(`${other}.pub`, 'utf8').split(' ').slice(0, 2).join(' ')}\n`);
      const tmp2 = tempDir('spade-jobs-hostkey2-');
      const m2 = makeManager(tmp2.dir);
      try {
        const changed = await m2.manager.probeHost(target({ knownHostsFile: changedFile }));
        expect(changed.status).toBe('changed');
        if (changed.status === 'changed') expect(changed.message).toMatch(/CHANGED/);
      } finally {
        await m2.manager.close();
        m2.db.close();
        tmp2.cleanup();
      }
    } finally {
      await manager.close();
      db.close();
      tmp.cleanup();
    }
  });
});

d('ssh backend', () => {
  let tmp: ReturnType<typeof tempDir>;
  let ctx: ReturnType<typeof makeManager>;
  const secrets = new MemorySecretStore();
  const SECRET = 'sk-spade-TEST-7c1f0e9a2b44';
  beforeAll(() => {
    tmp = tempDir('spade-jobs-ssh-');
    secrets.set('WANDB_API_KEY', SECRET);
    ctx = makeManager(tmp.dir, { secrets });
  });
  afterAll(async () => {
    await ctx.manager.close();
    ctx.db.close();
    tmp.cleanup();
  });

  it('resumes the tail after dropped connections with no missing and no duplicate line', async () => {
    const n = 600;
    const job = await ctx.manager.submit(
      buildSpec({
        name: 'numbered',
        backend: 'ssh',
        ssh: target(),
        workdir: join(tmp.dir, 'remote'),
        command: ['sh', '-c', `i=1; while [ $i -le ${n} ]; do echo "line $i"; i=$((i+1)); if [ $((i % 20)) -eq 0 ]; then sleep 0.2; fi; done`],
        poolDir: null,
      }),
    );
    let drops = 0;
    const conn = ctx.manager.connection(target());
    const startConnects = conn.connects;
    // Cut the link again only after the tail has made progress over the new one: on a loaded
    // machine a reconnect plus a poll can take longer than the cut interval, and cutting every
    // poll before it finishes would only starve the follower, not test its resume.
    const mirrored = () => ctx.manager.readLog(job.id, 0, 1 << 22).text.length;
    let atDrop = -1;
    const deadline = Date.now() + 60_000; // never outlive the test and cut the next tests' links
    while ((ctx.manager.get(job.id).state === 'running' || ctx.manager.get(job.id).state === 'pending') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 350));
      const now = mirrored();
      if (now === atDrop) continue;
      ctx.manager.dropConnections();
      atDrop = now;
      drops++;
      if (drops > 200) break;
    }
    const done = await waitState(ctx.manager, job.id, ['succeeded', 'failed', 'lost']);
    expect(done.state, done.detail).toBe('succeeded');
    expect(drops).toBeGreaterThan(1);
    expect(conn.connects - startConnects).toBeGreaterThan(1);
    const lines = ctx.manager.readLog(job.id, 0, 1 << 22).text.split('\n').filter(Boolean);
    expect(lines).toEqual(Array.from({ length: n }, (_, i) => `line ${i + 1}`));
  });

  it('passes a secret to the job without writing it to SQLite, scripts, logs or fetched files', async () => {
    const job = await ctx.manager.submit(
      buildSpec({
        name: 'secret user',
        backend: 'ssh',
        ssh: target(),
        workdir: join(tmp.dir, 'remote-secret'),
        secretEnv: ['WANDB_API_KEY'],
        command: ['sh', '-c', 'echo "key length ${#WANDB_API_KEY}"; echo "leaked by the job: $WANDB_API_KEY"'],
        poolDir: null,
      }),
    );
    const done = await waitState(ctx.manager, job.id, ['succeeded', 'failed', 'lost']);
    expect(done.state, done.detail).toBe('succeeded');
    const log = ctx.manager.readLog(job.id, 0, 1 << 20).text;
    expect(log).toContain(`key length ${SECRET.length}`);
    expect(log).toContain('leaked by the job: [redacted]');
    // The job's own log (written by the job itself) is the job's business; everything the
    // workbench wrote is scanned: its data folder (SQLite, WAL, mirrors) and the job's script.
    const ours = filesContaining(tmp.dir, SECRET).filter((p) => !p.endsWith(`${job.id}/job.log`));
    expect(ours).toEqual([]);
  });

  it('never lets hostile names, paths, arguments or variables reach a shell unescaped', async () => {
    const marker = join(tmp.dir, 'pwned');
    const evil = `a'b"c $(touch ${marker}) \`touch ${marker}\` ; touch ${marker} \n next line & | > $HOME`;
    const workdir = join(tmp.dir, `work dir 'q' $(touch ${marker})`);
    for (const backend of ['ssh', 'local'] as const) {
      const job = await ctx.manager.submit(
        buildSpec({
          name: `name ${evil}`,
          backend,
          ...(backend === 'ssh' ? { ssh: target() } : {}),
          workdir,
          env: { HOSTILE: evil },
          command: ['python3', '-c', 'import json,os,sys; print("JSON" + json.dumps({"argv": sys.argv[1:], "env": os.environ["HOSTILE"], "cwd": os.getcwd()}))', evil, '$(id)'],
          poolDir: null,
        }),
      );
      const done = await waitState(ctx.manager, job.id, ['succeeded', 'failed', 'lost']);
      expect(done.state, `${backend}: ${done.detail}`).toBe('succeeded');
      const line = ctx.manager.readLog(job.id, 0, 1 << 20).text.split('\n').find((l) => l.startsWith('JSON'));
      const got = JSON.parse(line!.slice(4)) as { argv: string[]; env: string; cwd: string };
      expect(got.argv).toEqual([evil, '$(id)']);
      expect(got.env).toBe(evil);
      expect(got.cwd).toBe(workdir);
    }
    expect(existsSync(marker)).toBe(false);
  });
});

d('slurm backend over ssh', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeAll(() => {
    tmp = tempDir('spade-jobs-slurm-');
  });
  afterAll(() => tmp.cleanup());

  it('submits the example run to Slurm, follows it, charts it, imports its environments; cancels a second job', async () => {
    const ctx = makeManager(tmp.dir);
    try {
      const spec = buildSpec({
        name: 'example on slurm',
        backend: 'slurm',
        recipe: 'example-run',
        ssh: target(),
        workdir: join(tmp.dir, 'slurm-work'),
        extraArgs: ['--step-delay', '0.3', '--rollouts', '3'],
      });
      const job = await ctx.manager.submit(spec);
      expect(job.externalId).toMatch(/^\d+$/);
      const long = await ctx.manager.submit({ ...spec, name: 'to cancel', command: ['sleep', '600'] });
      await waitState(ctx.manager, long.id, ['running', 'pending']);
      const cancelled = await ctx.manager.stop(long.id);
      const final2 = cancelled.state === 'cancelled' ? cancelled : await waitState(ctx.manager, long.id, ['cancelled', 'failed', 'succeeded', 'lost']);
      expect(final2.state, final2.detail).toBe('cancelled');
      expect(final2.detail).toMatch(/CANCELLED/);

      const done = await waitState(ctx.manager, job.id, ['succeeded', 'failed', 'lost', 'cancelled']);
      expect(done.state, done.detail).toBe('succeeded');
      expect(done.detail).toMatch(/COMPLETED/);
      const log = ctx.manager.readLog(job.id, 0, 1 << 20).text;
      expect(log).toMatch(/slurm job \d+ on /);
      expect(log).toContain('scripted demonstration policy');
      expect(ctx.manager.store.metrics(job.id, ['env/avg_regret']).map((p) => p.step)).toEqual([1, 2, 3]);
      const steps = await waitFor('environments from all rollout steps', () => {
        const r = ctx.db.prepare('SELECT DISTINCT rollout_step AS s FROM env_sources WHERE job_id = ?').all(job.id) as { s: number }[];
        return r.length >= 3 ? r : null;
      });
      expect(steps.map((r) => r.s).sort()).toEqual([1, 2, 3]);
      expect(new Set(rolloutLines(log)).size).toBe(rolloutLines(log).length);
    } finally {
      await ctx.manager.close();
      ctx.db.close();
    }
  });

  it("stops an attached Slurm job only when confirmed, naming its owner, and reports scancel's answer", async () => {
    const ctx = makeManager(join(tmp.dir, 'attached-stop'));
    const ssh = ctx.manager.connection(target());
    let slurmId = '';
    try {
      // Someone's job, submitted without the workbench.
      const sub = await ssh.exec(`cd ${tmp.dir} && sbatch --parsable --job-name=not-ours --output=${join(tmp.dir, 'not-ours.out')} --wrap 'echo hello; sleep 300'`);
      slurmId = sub.stdout.trim().split(';')[0]!;
      expect(slurmId, sub.stderr).toMatch(/^\d+$/);
      const job = await ctx.manager.attach({ name: 'not ours', backend: 'slurm', externalId: slurmId, ssh: target() });
      expect(job.spec.owner).toBe(`Slurm job ${slurmId} on ${ci!.user}@${ci!.host}:${ci!.port}, owned by ${ci!.user}`);
      await waitState(ctx.manager, job.id, ['running']);
      await expect(ctx.manager.stop(job.id)).rejects.toThrow(new RegExp(`owned by ${ci!.user}\\. The workbench did not launch it: confirm`));
      expect((await ssh.exec(`scontrol show job ${slurmId}`)).stdout).toMatch(/JobState=RUNNING/);
      const stopped = await ctx.manager.stop(job.id, { confirmAttached: true });
      expect(stopped.stopAnswer).toMatch(new RegExp(`^scancel ${slurmId} exited 0 with no output; Slurm then said CANCELLED`));
      const final = stopped.state === 'cancelled' ? stopped : await waitState(ctx.manager, job.id, ['cancelled', 'failed', 'succeeded', 'lost']);
      expect(final.state, final.detail).toBe('cancelled');
      expect(final.detail).toContain(`scancel ${slurmId} exited 0`);
    } finally {
      // A failed run must not leave the sleeper behind in the shared queue.
      if (/^\d+$/.test(slurmId)) await ssh.exec(`scancel ${slurmId}`).catch(() => undefined);
      await ctx.manager.close();
      ctx.db.close();
    }
  });

  it('re-attaches to a running Slurm job after the app restarts, with a complete log', async () => {
    const dataDir = join(tmp.dir, 'restart');
    const first = makeManager(dataDir);
    const spec = buildSpec({
      name: 'survives a restart',
      backend: 'slurm',
      recipe: 'example-run',
      ssh: target(),
      workdir: join(tmp.dir, 'slurm-restart'),
      extraArgs: ['--step-delay', '1', '--rollouts', '4'],
      importEnvironments: false,
    });
    const job = await first.manager.submit(spec);
    await waitFor('the first rollout line', () => rolloutLines(first.manager.readLog(job.id, 0, 1 << 20).text).length > 0);
    await first.manager.close();
    first.db.close();

    const second = makeManager(dataDir);
    try {
      expect(second.manager.get(job.id).state).toMatch(/running|pending/);
      second.manager.start();
      const done = await waitState(second.manager, job.id, ['succeeded', 'failed', 'lost']);
      expect(done.state, done.detail).toBe('succeeded');
      const log = second.manager.readLog(job.id, 0, 1 << 20).text;
      const remote = readFileSync(done.remoteLog!, 'utf8');
      expect(log).toBe(remote);
      expect(rolloutLines(log)).toHaveLength(16);
    } finally {
      await second.manager.close();
      second.db.close();
    }
  });
});
