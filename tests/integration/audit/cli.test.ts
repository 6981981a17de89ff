import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../../core/cli/main';
import { tempDir } from '../../helpers/tmp';
import { collectSources } from '../../../core/audit/sources';
import { getAudit } from '../../../core/audit/auditStore';
import { openDatabase } from '../../../core/memory/db';
import { ingest } from '../../../core/memory/repository';

// The audit command in-process (same code the bin script runs), over real CPython workers.
const fixtures = join(__dirname, 'fixtures');
// Counted, not written down: other tests add defect fixtures to this folder.
const defectCount = readdirSync(join(fixtures, 'defects')).filter((f) => f.endsWith('.py')).length;

async function cli(args: string[]) {
  let out = '';
  let err = '';
  const code = await main(['audit', ...args], { out: (t) => void (out += t.endsWith('\n') ? t : `${t}\n`), err: (t) => void (err += `${t}\n`) });
  return { code, out, err };
}

describe('spade-workbench audit', () => {
  it('prints exactly the documented JSON shape', async () => {
    const r = await cli([join(fixtures, 'defects'), '--format', 'json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as Record<string, unknown>;
    expect(Object.keys(j)).toEqual(['tool', 'environments', 'summary']);
    // SPADE's budget default (SpadeConfig.max_turns = 30) unless --max-turns says otherwise
    expect((j.tool as { maxTurns: number }).maxTurns).toBe(30);
    const envs = j.environments as Record<string, unknown>[];
    expect(defectCount).toBeGreaterThanOrEqual(7);
    expect(envs.length).toBe(defectCount);
    for (const e of envs) {
      expect(Object.keys(e)).toEqual(['file', 'sha256', 'name', 'verdict', 'spade', 'workbenchVerdict', 'checks']);
      // the defect fixtures are all games SPADE accepts: its verdict ignores the workbench's checks
      expect(e.spade).toEqual({ verdict: 'accept', message: null, check: null });
      expect(e.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(['pass', 'warn', 'fail']).toContain(e.verdict);
      for (const c of e.checks as Record<string, unknown>[]) {
        expect(Object.keys(c)).toEqual(['id', 'status', 'message', 'evidence']);
        expect(['pass', 'warn', 'fail', 'skip']).toContain(c.status);
      }
    }
    const summary = j.summary as { environments: number; by_check: Record<string, Record<string, number>> };
    expect(summary.environments).toBe(defectCount);
    expect(Object.keys(summary.by_check['spade.exec']!)).toEqual(['pass', 'warn', 'fail', 'skip']);
    expect(summary.by_check['determinism']!.fail).toBe(1);
    expect(summary.by_check['too-easy']!.fail).toBe(1);
    const names = envs.map((e) => e.name);
    expect(names).toContain('DriftEnv');
  });

  it('exits 1 only when --fail-on is met', async () => {
    const sound = join(fixtures, 'spade', '00_accepted.py');
    expect((await cli([sound, '--checks', 'spade.*', '--fail-on', 'fail'])).code).toBe(0);
    // 00_accepted has no hint, so nothing warns with spade checks only; the full audit warns on nothing either.
    const bad = join(fixtures, 'spade', '02_exec.py');
    expect((await cli([bad, '--format', 'table'])).code).toBe(0);
    expect((await cli([bad, '--fail-on', 'fail'])).code).toBe(1);
    const warnOnly = join(fixtures, 'hostile', 'h4_print.py');
    const w = await cli([warnOnly, '--format', 'json', '--checks', 'seed-ignored']);
    expect((JSON.parse(w.out) as { environments: { verdict: string }[] }).environments[0]!.verdict).toBe('warn');
    expect((await cli([warnOnly, '--checks', 'seed-ignored', '--fail-on', 'fail'])).code).toBe(0);
    expect((await cli([warnOnly, '--checks', 'seed-ignored', '--fail-on', 'warn'])).code).toBe(1);
  });

  it('writes markdown to --out and refuses bad input with status 2', async () => {
    const tmp = tempDir();
    const out = join(tmp.dir, 'r.md');
    const r = await cli([join(fixtures, 'spade'), '--format', 'md', '--out', out, '--checks', 'spade.*']);
    expect(r.code).toBe(0);
    const md = readFileSync(out, 'utf8');
    expect(md).toContain('| spade.exec |');
    expect(md).toContain('Syntax error in generated game code');
    expect((await cli([])).code).toBe(2);
    expect((await cli([fixtures, '--format', 'xml'])).code).toBe(2);
    expect((await cli([fixtures, '--checks', 'nonsense'])).err).toContain('Unknown check id(s): nonsense');
    expect((await cli([join(fixtures, 'nope.py')])).code).toBe(1);
    tmp.cleanup?.();
  });

  it('--all audits the head version of every environment in memory and stores the results', async () => {
    const tmp = tempDir();
    const db = openDatabase(join(tmp.dir, 'workbench.sqlite'));
    const srcs = collectSources(join(fixtures, 'defects'));
    for (const s of srcs) ingest(db, { source: s.source, path: s.file, fileStem: s.stem });
    db.close();
    const r = await cli(['--all', '--data-dir', tmp.dir, '--format', 'json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as { environments: { file: string; sha256: string; verdict: string }[] };
    expect(j.environments.length).toBe(srcs.length);
    expect(j.environments.every((e) => e.file.startsWith('memory:'))).toBe(true);
    const db2 = openDatabase(join(tmp.dir, 'workbench.sqlite'));
    for (const e of j.environments) expect(getAudit(db2, e.sha256)!.verdict).toBe(e.verdict);
    db2.close();
    tmp.cleanup();
  });
});
