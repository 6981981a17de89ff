import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../core/memory/db';
import { tempDir } from '../../helpers/tmp';
import { ciRay, ciServices, rayRest } from '../jobs/helpers';
import { cli, importPool, slurmArgs } from './pool';

// A regret sweep of a scripted policy over 12 environments (seed-pack games with hints, SPADE corpus
// games that win, lose, fail to load, return odd shapes, and tool-use games), played here, on the
// real one-node Ray head of .ci/services.sh and through its real Slurm: the same returns, endedBy,
// failures and regret everywhere, each episode stored once; and a sweep whose workbench is killed
// resumes from what arrived with nothing lost or counted twice.
const ray = ciRay();
const ci = ciServices();
if (!ray || !ci?.slurm) console.warn('[regret sweep tests skipped] no Ray head or Slurm: `.ci/services.sh start` (CI does)');
const d = ray && ci?.slurm ? describe : describe.skip;
const root = join(__dirname, '..', '..', '..');

const files = [
  ...['001_pattern_recognition', '002_logical_deduction', '003_strategic_planning', '004_mathematical_reasoning', '005_spatial_reasoning', '006_causal_inference'].map((n) => join(root, 'resources', 'seed-pack', 'games', `game_00000_${n}.py`)),
  ...['g01_seeded_win', 'g02_seeded_loss_truncated', 'l01_syntax_error', 'l15_step_four_tuple', 't01_tool_calls_then_answer', 't04_unknown_tool_and_tool_error'].map((n) => join(root, 'tests', 'fixtures', 'spade-corpus', `${n}.py`)),
];

interface SweepOut {
  sweep: string;
  run_id: string;
  on: string;
  status: string;
  envs: { env: string; hash: string; r_hint: number; r_no_hint: number; regret: number; hint_failed: boolean; returns_hint: number[]; returns_no_hint: number[]; failed: number }[];
  episodes: { hash: string; seed: number; hint: boolean; return: number | null; endedBy: string; failed: boolean; error: string | null; episodeId: number }[];
}

/** What must be the same wherever the episodes played (the episode ids are this library's own). */
function comparable(o: SweepOut): unknown {
  return { envs: o.envs, episodes: o.episodes.map(({ episodeId: _id, ...e }) => e) };
}

function stored(dataDir: string, sweepId: string, runId: string): { kind: string; state: string; n: number; distinct: number; episodes: number; runRows: number; run: string } {
  const db = openDatabase(join(dataDir, 'workbench.sqlite'));
  try {
    const s = db.prepare('SELECT kind, state FROM sweeps WHERE id = ?').get(sweepId) as { kind: string; state: string };
    const n = db.prepare('SELECT COUNT(*) AS n, COUNT(DISTINCT item_key) AS distinct_ FROM sweep_results WHERE sweep_id = ?').get(sweepId) as { n: number; distinct_: number };
    const e = db.prepare("SELECT COUNT(*) AS n FROM episodes WHERE json_extract(meta, '$.run') = ?").get(runId) as { n: number };
    const r = db.prepare('SELECT COUNT(*) AS n FROM model_run_episodes WHERE run_id = ?').get(runId) as { n: number };
    const run = db.prepare('SELECT status FROM model_runs WHERE id = ?').get(runId) as { status: string };
    return { kind: s.kind, state: s.state, n: n.n, distinct: n.distinct_, episodes: e.n, runRows: r.n, run: run.status };
  } finally {
    db.close();
  }
}

/** Runs the CLI as a separate process until it reports a first episode (or its submission), then ends it with `how`. */
function startThenKill(args: string[], how: 'SIGKILL' | 'SIGINT' = 'SIGKILL', when: 'result' | 'submitted' = 'result'): Promise<{ sweepId: string; err: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'bin', 'spade-workbench.mjs'), ...args], { env: process.env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    let sent = false;
    child.stderr.on('data', (b: Buffer) => {
      err += b.toString();
      if (!sent && (when === 'submitted' ? /: submitted Ray job /.test(err) : /: [1-9]\d*\/\d+ episodes/.test(err))) {
        sent = true;
        child.kill(how);
      }
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const id = /regret sweep (\w+) on/.exec(err)?.[1];
      if (!sent || !id) reject(new Error(`the sweep ended before it could be killed: ${err.slice(-2000)}`));
      else resolve({ sweepId: id, err, code });
    });
  });
}

d('regret --pool: local, Ray and Slurm agree', () => {
  let tmp: ReturnType<typeof tempDir>;
  let local: SweepOut;
  const base = ['regret', '--pool', '', '--estimator', 'paired', '--seeds', '2', '--max-turns', '8', '--json'];
  beforeAll(async () => {
    tmp = tempDir('spade-regret-sweep-');
    await importPool(tmp.dir, files);
    const r = await cli([...base, '--data-dir', tmp.dir, '--quiet']);
    expect(r.code, r.err).toBe(0);
    local = JSON.parse(r.out) as SweepOut;
    expect(local.envs).toHaveLength(12);
    // The pool is not trivial: wins, losses, a game that does not load, hinted and unhinted arms.
    const rets = local.episodes.map((e) => e.return);
    expect(rets).toContain(1);
    expect(rets).toContain(0);
    // SPADE refuses l01 (a syntax error) and l15 (a 4-tuple step, at its load validation) at every
    // play load: their unhinted plays are FAILED and dropped, in SPADE's words, said once.
    const loadErrors = local.episodes.filter((e) => e.failed).map((e) => e.error ?? '');
    const syntax = expect.stringContaining('SPADE refuses this game at load: Syntax error in generated game code');
    const shape = expect.stringContaining("SPADE refuses this game at load: Game step() failed on action 1 '\\boxed{1}': step() must return 5-tuple");
    expect(loadErrors).toEqual([syntax, syntax, shape, shape]);
    for (const m of loadErrors) expect(m.match(/refuses this game/gi)).toHaveLength(1);
    expect(local.episodes.filter((e) => e.failed).every((e) => e.endedBy === 'refused')).toBe(true);
    expect(local.envs.some((e) => !e.hint_failed)).toBe(true);
  }, 60_000);
  afterAll(() => tmp.cleanup());

  const check = (target: string, out: { code: number; out: string; err: string }) => {
    expect(out.code, out.err).toBe(0);
    const r = JSON.parse(out.out) as SweepOut;
    expect(r.on).toBe(target);
    expect(comparable(r)).toEqual(comparable(local));
    // Nothing the node did went another way than this workbench's own player would have gone.
    expect(out.out).not.toContain('went another way');
    const total = local.episodes.length;
    const counts = [...out.err.matchAll(new RegExp(`: (\\d+)/${total} episodes`, 'g'))].map((m) => Number(m[1]));
    expect(counts.some((n) => n > 0 && n < total), out.err).toBe(true);
    expect(counts.at(-1)).toBe(total);
    expect(stored(tmp.dir, r.sweep, r.run_id)).toEqual({ kind: 'regret', state: 'done', n: total, distinct: total, episodes: total, runRows: total, run: 'done' });
  };

  it('on the Ray head: shards as Ray tasks', async () => {
    const target = `ray://${new URL(ray!.address).host}`;
    check(target, await cli([...base, '--on', target, '--ray-python', join(ray!.bin, 'python'), '--shard-size', '50', '--data-dir', tmp.dir]));
  }, 90_000);

  it('through Slurm: a job array, one shard a task', async () => {
    check(`slurm:${ci!.user}@${ci!.host}:${ci!.port}`, await cli([...base, ...slurmArgs(ci!), '--shard-size', '50', '--data-dir', tmp.dir]));
  }, 90_000);

  it('a script with tool calls on Ray, killed and run again: resumed, nothing lost or counted twice, the same as here', async () => {
    const script = join(tmp.dir, 'script.json');
    writeFileSync(script, JSON.stringify(['<tool_call>{"name": "lookup", "arguments": {"item": "apple"}}</tool_call>', 'I say \\boxed{3}', '<tool_call><function=add><parameter=x>3</parameter><parameter=y>5</parameter></function></tool_call>', 'The total is <answer>8</answer>']));
    const args = ['regret', '--pool', '', '--estimator', 'paired', '--seeds', '1', '--policy', `script:${script}`, '--json', '--data-dir', tmp.dir];
    const here = await cli([...args, '--quiet']);
    expect(here.code, here.err).toBe(0);
    const target = ['--on', `ray://${new URL(ray!.address).host}`, '--ray-python', join(ray!.bin, 'python'), '--shard-size', '4'];
    const killed = await startThenKill([...args, ...target]);
    const again = await cli([...args, ...target]);
    expect(again.code, again.err).toBe(0);
    expect(again.err).toContain(`Resuming regret sweep ${killed.sweepId}`);
    // The killed run's episodes were in the job's log and came again: counted once.
    expect(again.err).toMatch(/repeated result\(s\) not counted/);
    const r = JSON.parse(again.out) as SweepOut;
    expect(comparable(r)).toEqual(comparable(JSON.parse(here.out) as SweepOut));
    const n = r.episodes.length;
    expect(stored(tmp.dir, killed.sweepId, r.run_id)).toEqual({ kind: 'regret', state: 'done', n, distinct: n, episodes: n, runRows: n, run: 'done' });
  }, 120_000);

  it('Ctrl-C cancels a sweep on Ray: its job is stopped, the run record says cancelled', async () => {
    const r = await startThenKill(['regret', '--pool', '', '--estimator', 'paired', '--seeds', '3', '--policy', 'random', '--json', '--data-dir', tmp.dir, '--on', `ray://${new URL(ray!.address).host}`, '--ray-python', join(ray!.bin, 'python')], 'SIGINT', 'submitted');
    expect(r.code, r.err).toBe(130);
    const db = openDatabase(join(tmp.dir, 'workbench.sqlite'));
    try {
      const s = db.prepare('SELECT state, remote, options FROM sweeps WHERE id = ?').get(r.sweepId) as { state: string; remote: string; options: string };
      expect(s.state).toBe('cancelled');
      const run = db.prepare('SELECT status FROM model_runs WHERE id = ?').get((JSON.parse(s.options) as { runId: string }).runId) as { status: string };
      expect(run.status).toBe('cancelled');
      const job = await rayRest(ray!.address, 'GET', `/api/jobs/${String((JSON.parse(s.remote) as { submissionId: string }[])[0]!.submissionId)}`);
      expect((JSON.parse(job.text) as { status: string }).status).toBe('STOPPED');
    } finally {
      db.close();
    }
  }, 60_000);
});
