import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { AuditReport } from '../../../core/audit/report';
import { openDatabase } from '../../../core/memory/db';
import { tempDir } from '../../helpers/tmp';
import { ciRay, ciServices } from '../jobs/helpers';
import { cli, comparable, importPool, poolFiles, slurmArgs } from './pool';

// The same 60 environments (seed pack and SPADE corpus) audited here, on the real one-node Ray head
// of .ci/services.sh (Jobs API on 127.0.0.1) and through its real Slurm over SSH: the same
// verdicts and evidence, each result stored once, with progress while they arrive.
const ray = ciRay();
const ci = ciServices();
if (!ray || !ci?.slurm) console.warn('[dispatch differential test skipped] no Ray head or Slurm: `.ci/services.sh start` (CI does)');
const d = ray && ci?.slurm ? describe : describe.skip;

function stored(dataDir: string, target: string): { state: string; n: number; distinct: number } {
  const db = openDatabase(join(dataDir, 'workbench.sqlite'));
  try {
    const s = db.prepare('SELECT id, state FROM sweeps WHERE target = ? ORDER BY created_at DESC LIMIT 1').get(target) as { id: string; state: string };
    const n = db.prepare('SELECT COUNT(*) AS n, COUNT(DISTINCT item_key) AS distinct_ FROM sweep_results WHERE sweep_id = ?').get(s.id) as { n: number; distinct_: number };
    return { state: s.state, n: n.n, distinct: n.distinct_ };
  } finally {
    db.close();
  }
}

d('audit --pool: local, Ray and Slurm agree', () => {
  let tmp: ReturnType<typeof tempDir>;
  let local: AuditReport;
  beforeAll(async () => {
    tmp = tempDir('spade-dispatch-diff-');
    await importPool(tmp.dir, poolFiles());
    const r = await cli(['audit', '--pool', '', '--data-dir', tmp.dir, '--json', '--quiet']);
    expect(r.code, r.err).toBe(0);
    local = JSON.parse(r.out) as AuditReport;
    expect(local.environments).toHaveLength(60);
  }, 120_000);
  afterAll(() => tmp.cleanup());

  const check = (target: string, out: { code: number; out: string; err: string }) => {
    expect(out.code, out.err).toBe(0);
    const r = JSON.parse(out.out) as AuditReport;
    expect(comparable(r)).toEqual(comparable(local));
    expect(r.tool.on).toBe(target);
    // Progress came while results arrived, not only at the end.
    const counts = [...out.err.matchAll(/: (\d+)\/60 audited/g)].map((m) => Number(m[1]));
    expect(counts.some((n) => n > 0 && n < 60), out.err).toBe(true);
    expect(counts.at(-1)).toBe(60);
    expect(stored(tmp.dir, target)).toEqual({ state: 'done', n: 60, distinct: 60 });
  };

  it('on the Ray head: shards of 30 as Ray tasks', async () => {
    const target = `ray://${new URL(ray!.address).host}`;
    check(target, await cli(['audit', '--pool', '', '--on', target, '--ray-python', join(ray!.bin, 'python'), '--shard-size', '30', '--data-dir', tmp.dir, '--json']));
  }, 120_000);

  it('through Slurm: a job array, one shard a task', async () => {
    const target = `slurm:${ci!.user}@${ci!.host}:${ci!.port}`;
    check(target, await cli(['audit', '--pool', '', ...slurmArgs(ci!), '--shard-size', '30', '--data-dir', tmp.dir, '--json']));
  }, 120_000);
});
