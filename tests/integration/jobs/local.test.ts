import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSpec } from '../../../core/jobs/launch';
import { importPaths } from '../../../core/memory/importer';
import { importsOfJob } from '../../../core/memory/importLogStore';
import { probePython } from '../../../core/runtime/native';
import { tempDir } from '../../helpers/tmp';
import { makeManager, rolloutLines, waitFor, waitState } from './helpers';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('local backend with the example run', () => {
  it('runs the example run, mirrors its log, charts its metrics and imports its environments', async () => {
    const tmp = tempDir('spade-jobs-local-');
    const { db, manager, errors } = makeManager(tmp.dir);
    cleanups.push(async () => {
      await manager.close();
      db.close();
      tmp.cleanup();
    });
    const spec = buildSpec({ name: 'example', backend: 'local', recipe: 'example-run', workdir: join(tmp.dir, 'work'), extraArgs: ['--step-delay', '0', '--rollouts', '3'] });
    const job = await manager.submit(spec);
    const done = await waitState(manager, job.id, ['succeeded', 'failed', 'lost']);
    expect(done.state, done.detail).toBe('succeeded');
    expect(done.exitCode).toBe(0);
    const log = manager.readLog(job.id, 0, 1 << 20).text;
    expect(log).toContain('scripted demonstration policy (NOT a language model)');
    expect(log).toContain('spade-example-run: done (3 rollout steps)');
    // The mirror is byte-for-byte the job's own log (no secrets were given, so nothing redacted).
    expect(log).toBe(readFileSync(done.remoteLog!, 'utf8'));
    const keys = manager.store.metricKeys(job.id);
    for (const k of ['rollout/actor_win_rate', 'env/avg_regret', 'env/avg_r_hint', 'env/avg_r_no_hint', 'env_validation_pass_rate']) expect(keys).toContain(k);
    expect(keys.some((k) => k.startsWith('env/skill_'))).toBe(true);
    // One definition per name, SPADE's: no rollout/mean_return (nothing is trained), skills named as
    // SPADE names them, and env/skill_*/actor_win_rate is the skill's mean unhinted return, so it is
    // never 0 beside a positive r_no_hint (it was a share of environments before).
    expect(keys).not.toContain('rollout/mean_return');
    expect(keys.filter((k) => k.startsWith('env/skill_')).every((k) => /^env\/skill_[A-Z][A-Za-z]*(_[A-Z][A-Za-z-]*)*\//.test(k))).toBe(true);
    const all = manager.store.metrics(job.id);
    for (const p of all.filter((x) => /^env\/skill_.+\/r_no_hint$/.test(x.key))) {
      const win = all.find((x) => x.step === p.step && x.key === p.key.replace(/r_no_hint$/, 'actor_win_rate'))!;
      expect(win.value, p.key).toBeCloseTo(p.value, 9);
    }
    // Each game's [REGRET] line is kept with the job and reaches the environment the job brought back.
    const games = manager.store.games(job.id);
    expect(games.length).toBeGreaterThan(0);
    await waitFor('[REGRET] returns on the environments', () => {
      const r = db.prepare('SELECT COUNT(*) AS n FROM environments e JOIN env_sources s ON s.env_id = e.id WHERE s.job_id = ? AND e.r_hint IS NOT NULL AND e.r_no_hint IS NOT NULL').get(job.id) as { n: number };
      return r.n > 0;
    });
    const regret = manager.store.metrics(job.id, ['env/avg_regret']);
    expect(regret.map((p) => p.step)).toEqual([1, 2, 3]);
    // Environments flowed back into memory, linked to the job and their rollout step.
    const rows = await waitFor('environments linked to the job', () => {
      const r = db.prepare('SELECT DISTINCT rollout_step AS step FROM env_sources WHERE job_id = ? ORDER BY rollout_step').all(job.id) as { step: number | null }[];
      return r.some((x) => x.step === 3) ? r : null;
    });
    expect(rows.map((r) => r.step)).toEqual(expect.arrayContaining([1, 2, 3]));
    expect(manager.store.files(job.id).some((f) => f.path.endsWith('env_memory.json'))).toBe(true);
    expect(rolloutLines(log).length).toBeGreaterThan(0);
    expect(errors).toEqual([]);
  });

  it("runs with the native runtime's Python: a numpy seed game's variant comes back as a new environment naming its parent", async () => {
    const py = probePython();
    expect(py?.numpy, 'this test needs the workbench venv (SPADE_WORKBENCH_VENV) or a python3 with numpy').toBe(true);
    const tmp = tempDir('spade-jobs-local-new-');
    const { db, manager } = makeManager(tmp.dir);
    cleanups.push(async () => {
      await manager.close();
      db.close();
      tmp.cleanup();
    });
    // The library the app starts with: the seed pack, which the run reads as its pool.
    expect((await importPaths(db, [join(process.cwd(), 'resources', 'seed-pack')])).imported).toBe(21);
    const seed = db.prepare("SELECT id, head_hash AS hash FROM environments WHERE name = 'HiddenVectorEnv'").get() as { id: number; hash: string };
    const spec = buildSpec({ name: 'numpy example', backend: 'local', recipe: 'example-run', workdir: join(tmp.dir, 'work'), extraArgs: ['--step-delay', '0', '--rollouts', '3'] });
    expect(spec.command[0]).toBe(py!.path);
    const job = await manager.submit(spec);
    const done = await waitState(manager, job.id, ['succeeded', 'failed', 'lost']);
    expect(done.state, done.detail).toBe('succeeded');
    const log = manager.readLog(job.id, 0, 1 << 20).text;
    expect(log).toMatch(/^python: .* \(numpy \d/m);
    expect(log).not.toMatch(/rejected HiddenVector/);
    const variant = await waitFor('the numpy game\'s variant in the library', () =>
      db.prepare("SELECT id, name, job_id AS jobId, rejected, meta FROM environments WHERE name GLOB 'HiddenVector*TurnsEnv'").get() as
        | { id: number; name: string; jobId: string; rejected: number; meta: string }
        | undefined,
    );
    expect(variant.id).not.toBe(seed.id);
    expect(variant.jobId).toBe(job.id);
    expect(variant.rejected).toBe(0);
    expect((JSON.parse(variant.meta) as { spec: { parents: { sha256: string }[] } }).spec.parents).toEqual([expect.objectContaining({ name: 'HiddenVectorEnv', sha256: seed.hash })]);
    // Every game it wrote is new: none is a copy of a seed game.
    await waitFor('the run\'s imports', () => (manager.store.files(job.id).some((f) => f.path.endsWith('env_memory.json')) ? true : null));
    const back = importsOfJob(db, job.id);
    expect(back.imported).toBeGreaterThanOrEqual(12);
    const fromRun = db.prepare('SELECT COUNT(*) AS n FROM environments WHERE job_id = ? AND id > 21').get(job.id) as { n: number };
    expect(fromRun.n).toBe(back.imported);
  });

  it('stop kills the whole process group', async () => {
    const tmp = tempDir('spade-jobs-stop-');
    const { db, manager } = makeManager(tmp.dir);
    cleanups.push(async () => {
      await manager.close();
      db.close();
      tmp.cleanup();
    });
    // The shell starts a grandchild that would outlive a plain kill of the first process.
    const job = await manager.submit(
      buildSpec({ name: 'sleeper', backend: 'local', command: ['sh', '-c', 'sleep 300 & echo "child $!"; wait'], workdir: tmp.dir, poolDir: null }),
    );
    const childPid = await waitFor('the grandchild pid in the log', () => /child (\d+)/.exec(manager.readLog(job.id, 0, 4096).text)?.[1]);
    const stopped = await manager.stop(job.id);
    expect(stopped.state).toBe('cancelled');
    await waitFor('the grandchild to be gone', () => {
      try {
        process.kill(Number(childPid), 0);
        const st = readFileSync(`/proc/${childPid}/stat`, 'utf8');
        return st.slice(st.lastIndexOf(')') + 2).startsWith('Z');
      } catch {
        return true;
      }
    }, 15_000);
  });
});
