import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { AuditReport } from '../../../core/audit/report';
import { tempDir } from '../../helpers/tmp';
import { ciRay } from '../jobs/helpers';
import { cli, importPool } from './pool';

// Issue 46 on the Ray path: the real one-node Ray head of .ci/services.sh runs the audit shard. A
// game that crashes on one action behind a 50 MB observation at each reset fails crash-on-action
// there as locally (before values arrived bounded: Unencodable, the check skipped, verdict warn).
const ray = ciRay();
if (!ray) console.warn('[oversize Ray test skipped] no Ray head: `.ci/services.sh start` (CI does)');
const d = ray ? describe : describe.skip;

d('a crash behind a huge observation, audited on the Ray head', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeAll(async () => {
    tmp = tempDir('spade-oversize-ray-');
    await importPool(tmp.dir, [join(__dirname, '..', 'audit', 'fixtures', 'oversize', 'big_obs_crash.py')]);
  }, 60_000);
  afterAll(() => tmp.cleanup());

  it('fails crash-on-action, its answer carried bounded', async () => {
    const target = `ray://${new URL(ray!.address).host}`;
    const r = await cli(['audit', '--pool', '', '--on', target, '--ray-python', join(ray!.bin, 'python'), '--data-dir', tmp.dir, '--json']);
    expect(r.code, r.err).toBe(0);
    const report = JSON.parse(r.out) as AuditReport;
    expect(report.environments).toHaveLength(1);
    const env = report.environments[0]!;
    const crash = env.checks.find((c) => c.id === 'crash-on-action')!;
    expect(crash.status, crash.message).toBe('fail');
    expect(crash.message).toContain('ValueError');
    expect(env.verdict).toBe('fail');
    expect(env.checks.filter((c) => c.message.includes('Audit error'))).toEqual([]);
  }, 300_000);
});
