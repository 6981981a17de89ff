import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { AuditReport } from '../../../core/audit/report';
import { openDatabase } from '../../../core/memory/db';
import { tempDir } from '../../helpers/tmp';
import { ciRay } from '../jobs/helpers';
import { cli, comparable, importPool, poolFiles } from './pool';

// Pool audits on the real one-node Ray head of .ci/services.sh (Jobs API on 127.0.0.1) against the
// same pool audited here: the same verdicts and evidence, results stored once each, with progress.
const ray = ciRay();
if (!ray) console.warn('[dispatch ray tests skipped] no Ray head: start it with `.ci/services.sh start-ray` (CI does)');
const d = ray ? describe : describe.skip;

d('audit --pool --on ray://', () => {
  let tmp: ReturnType<typeof tempDir>;
  const on = () => `ray://${new URL(ray!.address).host}`;
  const rayPython = () => join(ray!.bin, 'python');
  beforeAll(async () => {
    tmp = tempDir('spade-dispatch-ray-');
    await importPool(tmp.dir, poolFiles());
  });
  afterAll(() => tmp.cleanup());

  it('gives the local report, streamed into SQLite with progress', async () => {
    const local = await cli(['audit', '--pool', '', '--data-dir', tmp.dir, '--json']);
    expect(local.code, local.err).toBe(0);
    const remote = await cli(['audit', '--pool', '', '--on', on(), '--ray-python', rayPython(), '--data-dir', tmp.dir, '--json']);
    expect(remote.code, remote.err).toBe(0);
    const a = JSON.parse(local.out) as AuditReport;
    const b = JSON.parse(remote.out) as AuditReport;
    expect(a.environments).toHaveLength(60);
    expect(comparable(b)).toEqual(comparable(a));
    expect(b.summary.environments).toBe(60);
    expect(b.tool.on).toBe(on());
    // Progress came as results arrived, not only at the end.
    const counts = [...remote.err.matchAll(/: (\d+)\/60 audited/g)].map((m) => Number(m[1]));
    expect(counts.some((n) => n > 0 && n < 60)).toBe(true);
    expect(counts.at(-1)).toBe(60);
    const db = openDatabase(join(tmp.dir, 'workbench.sqlite'));
    try {
      const sweep = db.prepare("SELECT id, state FROM audit_sweeps WHERE target = ? ORDER BY created_at DESC LIMIT 1").get(on()) as { id: string; state: string };
      expect(sweep.state).toBe('done');
      const n = (db.prepare('SELECT COUNT(*) AS n, COUNT(DISTINCT node) AS nodes FROM audit_sweep_results WHERE sweep_id = ?').get(sweep.id) as { n: number; nodes: number });
      expect(n.n).toBe(60);
      // Each result says which node ran it: it came from the Ray worker, not from this process.
      expect(n.nodes).toBe(1);
    } finally {
      db.close();
    }
  }, 240_000);
});
