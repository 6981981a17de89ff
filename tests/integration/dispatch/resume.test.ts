import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../core/memory/db';
import type { AuditReport } from '../../../core/audit/report';
import { tempDir } from '../../helpers/tmp';
import { ciRay, ciServices, rayRest } from '../jobs/helpers';
import { cli, slurmArgs } from './pool';

// A sweep whose workbench is killed mid-way resumes from what arrived, with nothing lost and nothing
// counted twice; a cancelled sweep stops its Ray job or scancels its array. The real services of
// .ci/services.sh; the workbench that is killed is the built CLI in a child process.
const ray = ciRay();
const ci = ciServices();
if (!ray || !ci?.slurm) console.warn('[dispatch resume tests skipped] no Ray head or Slurm: `.ci/services.sh start` (CI does)');
const d = ray && ci?.slurm ? describe : describe.skip;
const root = join(__dirname, '..', '..', '..');
const N = 4;

/**
 * Games slow enough (a few seconds of audit each) that a sweep is still running when it is killed;
 * each slower than the one before, so that on a quiet machine the first result lands well before the
 * last (with equal games both shards finished within one progress tick, and the kill came too late).
 */
function slowGames(dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (let k = 0; k < N; k++) {
    writeFileSync(
      join(dir, `slow_${k}.py`),
      `import time\n\n\nclass Slow${k}Env:\n    def __init__(self, max_turns=3):\n        self.max_turns = max_turns\n        self.t = 0\n\n    def reset(self, seed=None):\n        time.sleep(${(0.02 + 0.04 * k).toFixed(2)})\n        self.t = 0\n        return "Say \\\\boxed{${k}}", {}\n\n    def step(self, action):\n        self.t += 1\n        won = "\\\\boxed{${k}}" in action\n        return "ok", 1.0 if won else 0.0, won or self.t >= self.max_turns, False, {}\n`,
    );
  }
}

/** Runs the CLI as a separate process until it reports a first result (or, `when` 'submitted', its submission), then `how` ends it. */
function startThenStop(args: string[], how: 'SIGKILL' | 'SIGINT', when: 'result' | 'submitted' = 'result'): Promise<{ sweepId: string; code: number | null; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'bin', 'spade-workbench.mjs'), ...args], { env: process.env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    let sent = false;
    child.stderr.on('data', (b: Buffer) => {
      err += b.toString();
      if (!sent && (when === 'submitted' ? /: submitted (Ray job|Slurm job array) /.test(err) : new RegExp(`: [1-9]\\d*/${N} audited`).test(err))) {
        sent = true;
        child.kill(how);
      }
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const id = /audit sweep (\w+) on/.exec(err)?.[1];
      if (!sent || !id) reject(new Error(`the sweep ended before it could be stopped: ${err.slice(-2000)}`));
      else resolve({ sweepId: id, code, err });
    });
  });
}

function sweepState(dataDir: string, id: string): { state: string; n: number; distinct: number; remote: Record<string, unknown>[] } {
  const db = openDatabase(join(dataDir, 'workbench.sqlite'));
  try {
    const s = db.prepare('SELECT state, remote FROM sweeps WHERE id = ?').get(id) as { state: string; remote: string };
    const n = db.prepare('SELECT COUNT(*) AS n, COUNT(DISTINCT item_key) AS distinct_ FROM sweep_results WHERE sweep_id = ?').get(id) as { n: number; distinct_: number };
    return { state: s.state, n: n.n, distinct: n.distinct_, remote: JSON.parse(s.remote) as Record<string, unknown>[] };
  } finally {
    db.close();
  }
}

d('audit sweeps: resume and cancel', () => {
  let tmp: ReturnType<typeof tempDir>;
  const rayOn = () => ['--on', `ray://${new URL(ray!.address).host}`, '--ray-python', join(ray!.bin, 'python')];
  beforeAll(async () => {
    tmp = tempDir('spade-dispatch-resume-');
    slowGames(join(tmp.dir, 'slow'));
    const r = await cli(['import', join(tmp.dir, 'slow'), '--data-dir', tmp.dir]);
    expect(r.code, r.err).toBe(0);
  });
  afterAll(() => tmp.cleanup());

  it('Ray: the same command after a kill resumes the sweep; results that come again are stored once', async () => {
    const args = ['audit', '--pool', 'Slow', '--shard-size', '2', '--data-dir', tmp.dir, '--json', '--max-turns', '30'];
    const killed = await startThenStop([...args, ...rayOn()], 'SIGKILL');
    const before = sweepState(tmp.dir, killed.sweepId);
    expect(before.state).toBe('running');
    expect(before.n).toBeGreaterThan(0);
    expect(before.n).toBeLessThan(N);
    const again = await cli([...args, ...rayOn()]);
    expect(again.code, again.err).toBe(0);
    expect(again.err).toContain(`Resuming audit sweep ${killed.sweepId}`);
    // The killed run's results were in the job's log and came again: counted once.
    expect(again.err).toMatch(/repeated result\(s\) not counted/);
    expect((JSON.parse(again.out) as AuditReport).environments.map((e) => e.name).sort()).toEqual(Array.from({ length: N }, (_, k) => `Slow${k}Env`));
    const after = sweepState(tmp.dir, killed.sweepId);
    expect(after).toMatchObject({ state: 'done', n: N, distinct: N });
    // It followed the job the killed workbench had started instead of submitting the work again.
    expect(after.remote).toHaveLength(1);
  }, 120_000);

  it('Slurm: --resume ID after a kill finishes the sweep with nothing lost or counted twice', async () => {
    const args = ['audit', '--pool', 'Slow', '--shard-size', '2', '--data-dir', tmp.dir, '--json', '--max-turns', '31'];
    const killed = await startThenStop([...args, ...slurmArgs(ci!)], 'SIGKILL');
    expect(sweepState(tmp.dir, killed.sweepId).state).toBe('running');
    const again = await cli(['audit', '--resume', killed.sweepId, '--data-dir', tmp.dir, '--json']);
    expect(again.code, again.err).toBe(0);
    expect(again.err).toMatch(/repeated result\(s\) not counted/);
    expect((JSON.parse(again.out) as AuditReport).environments).toHaveLength(N);
    expect(sweepState(tmp.dir, killed.sweepId)).toMatchObject({ state: 'done', n: N, distinct: N });
  }, 120_000);

  it('Ray: Ctrl-C cancels the sweep and stops its job', async () => {
    const r = await startThenStop(['audit', '--pool', 'Slow', '--shard-size', '2', '--data-dir', tmp.dir, '--json', '--max-turns', '32', ...rayOn()], 'SIGINT', 'submitted');
    expect(r.code, r.err).toBe(130);
    const s = sweepState(tmp.dir, r.sweepId);
    expect(s.state).toBe('cancelled');
    const job = await rayRest(ray!.address, 'GET', `/api/jobs/${String(s.remote[0]!.submissionId)}`);
    expect((JSON.parse(job.text) as { status: string }).status).toBe('STOPPED');
  }, 120_000);

  it('Slurm: --cancel ID scancels the array of a sweep whose workbench is gone', async () => {
    const killed = await startThenStop(['audit', '--pool', 'Slow', '--shard-size', '2', '--data-dir', tmp.dir, '--json', '--max-turns', '33', ...slurmArgs(ci!)], 'SIGKILL', 'submitted');
    const jobId = String(sweepState(tmp.dir, killed.sweepId).remote[0]!.jobId);
    const c = await cli(['audit', '--cancel', killed.sweepId, '--data-dir', tmp.dir]);
    expect(c.code, c.err).toBe(0);
    expect(c.out).toContain(`scancel ${jobId} exited 0`);
    expect(sweepState(tmp.dir, killed.sweepId).state).toBe('cancelled');
    // scancel is asynchronous: Slurm lists the array until its tasks are signalled.
    const { execFileSync } = await import('node:child_process');
    let listed = '';
    for (let i = 0; i < 40; i++) {
      listed = execFileSync('ssh', ['-p', String(ci!.port), '-i', ci!.key, '-o', `UserKnownHostsFile=${ci!.knownHosts}`, `${ci!.user}@${ci!.host}`, `squeue -h -j ${jobId} -t PENDING,RUNNING -o %i`], { encoding: 'utf8' });
      if (!listed.trim()) break;
      await new Promise((res) => setTimeout(res, 250));
    }
    expect(listed.trim()).toBe('');
  }, 120_000);
});
