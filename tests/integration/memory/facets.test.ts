import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../../core/memory/db';
import { importPaths } from '../../../core/memory/importer';
import { facets, search, selectIds, updateEnvironment } from '../../../core/memory/repository';
import { saveAudit } from '../../../core/audit/auditStore';
import type { CheckResult } from '../../../core/audit/types';
import { tempDir } from '../../helpers/tmp';
import { gameSource, write } from './fixtures';

let tmp: ReturnType<typeof tempDir>;
let db: Db;
beforeEach(async () => {
  tmp = tempDir('spade-facets-');
  db = openDatabase(join(tmp.dir, 'a.sqlite'));
  const src = join(tmp.dir, 'src');
  for (let i = 0; i < 5; i++) write(src, `games/game_00001_00${i}_optimization.py`, gameSource(i, `Opt${i}Env`));
  await importPaths(db, [src]);
});
afterEach(() => {
  db.close();
  tmp.cleanup();
});

const check = (id: string, status: CheckResult['status']): CheckResult => ({ id, status, message: '', evidence: {} });
const head = (name: string) => search(db, { query: name }).rows[0]!.hash;

describe('library facets', () => {
  it('counts stored audit verdicts and, per check, the environments failing it; the facet ignores its own filter', () => {
    const audit = (name: string, checks: CheckResult[]) => saveAudit(db, head(name), { className: name, toolUse: false, checks, elapsedMs: 1 }, { toolVersion: 't' });
    audit('Opt0Env', [check('spade.load', 'pass'), check('determinism', 'pass')]);
    audit('Opt1Env', [check('spade.load', 'pass'), check('determinism', 'fail'), check('reset-leak', 'fail')]);
    audit('Opt2Env', [check('spade.load', 'pass'), check('determinism', 'fail')]);
    audit('Opt3Env', [check('spade.load', 'pass'), check('timing', 'warn')]);
    const f = facets(db, '', {});
    expect(f.audit.verdicts).toEqual([
      { value: 'fail', count: 2 },
      { value: 'pass', count: 1 },
      { value: 'warn', count: 1 },
    ]);
    expect(f.audit.failing).toEqual([
      { value: 'determinism', count: 2 },
      { value: 'reset-leak', count: 1 },
    ]);
    const filtered = facets(db, '', { audit: { checkId: 'determinism', status: 'fail' } });
    expect(filtered.audit.failing).toEqual(f.audit.failing);
    expect(filtered.skills).toEqual([{ value: 'Optimization', count: 2 }]);
    expect(search(db, { filters: { audit: { status: 'pass' } } }).rows.map((r) => r.name)).toEqual(['Opt0Env']);
  });

  it("names a job's run by the job's name (the filter still takes the run id); a --run NAME import keeps its name", async () => {
    const now = new Date().toISOString();
    db.prepare("INSERT INTO jobs (id, name, backend, spec, state, created_at, updated_at) VALUES ('job-7f3a', 'qwen8b nightly', 'local', '{}', 'done', ?, ?)").run(now, now);
    const a = join(tmp.dir, 'run-a');
    write(a, 'games/game_00002_000_memory_recall.py', gameSource(20, 'RecallEnv'));
    await importPaths(db, [a], { runId: 'job-7f3a', jobId: 'job-7f3a' });
    const b = join(tmp.dir, 'run-b');
    write(b, 'games/game_00002_001_memory_recall.py', gameSource(21, 'RecallTwoEnv'));
    await importPaths(db, [b], { runId: 'ablation-3' });
    expect(facets(db, '', {}).runs).toEqual([
      { value: 'ablation-3', count: 1, label: null },
      { value: 'job-7f3a', count: 1, label: 'qwen8b nightly' },
    ]);
    expect(search(db, { filters: { run: 'job-7f3a' } }).rows.map((r) => r.name)).toEqual(['RecallEnv']);
  });

  it('sorts by rating both ways, unrated last', () => {
    const ids = selectIds(db, {});
    updateEnvironment(db, ids[0]!, { rating: 2 });
    updateEnvironment(db, ids[1]!, { rating: 5 });
    updateEnvironment(db, ids[2]!, { rating: 0 });
    const names = (dir: 'asc' | 'desc') => search(db, { sort: { field: 'rating', dir } }).rows.map((r) => r.rating);
    expect(names('desc')).toEqual([5, 2, 0, null, null]);
    expect(names('asc')).toEqual([0, 2, 5, null, null]);
  });
});
