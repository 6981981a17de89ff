import { describe, expect, it } from 'vitest';
import { deadAudit } from '../../core/audit/pool';
import { buildReport, failOnMet, reportEnv, toMarkdown, toTable } from '../../core/audit/report';
import { checkSelected, spadeAccepts, validateCheckIds, verdictOf, type CheckResult } from '../../core/audit/types';
import { auditMarkers } from '../../renderer/src/features/audit/markers';

const c = (id: string, status: CheckResult['status'], evidence: Record<string, unknown> = {}): CheckResult => ({ id, status, message: `${id} ${status}`, evidence });

describe('audit report', () => {
  it('derives verdicts: any fail, else any warn, else pass; SPADE accepts unless a spade.* check fails', () => {
    expect(verdictOf([c('a', 'pass'), c('b', 'skip')])).toBe('pass');
    expect(verdictOf([c('a', 'pass'), c('b', 'warn')])).toBe('warn');
    expect(verdictOf([c('a', 'warn'), c('b', 'fail')])).toBe('fail');
    expect(spadeAccepts([c('spade.step', 'pass'), c('reset-leak', 'fail')])).toBe(true);
    expect(spadeAccepts([c('spade.step', 'fail')])).toBe(false);
  });

  it('counts every status per check and meets --fail-on by level', () => {
    const r = buildReport({ name: 't' }, [
      reportEnv('a.py', 'x'.repeat(64), 'a', { className: 'AEnv', toolUse: false, checks: [c('spade.exec', 'pass'), c('types', 'warn')], elapsedMs: 1 }),
      reportEnv('b.py', 'y'.repeat(64), 'b', { className: null, toolUse: false, checks: [c('spade.exec', 'fail'), c('types', 'skip')], elapsedMs: 1 }),
    ]);
    expect(r.summary).toEqual({ environments: 2, by_check: { 'spade.exec': { pass: 1, warn: 0, fail: 1, skip: 0 }, types: { pass: 0, warn: 1, fail: 0, skip: 1 } } });
    expect(r.environments.map((e) => [e.name, e.verdict])).toEqual([['AEnv', 'warn'], ['b', 'fail']]);
    expect(failOnMet(r, undefined)).toBe(false);
    expect(failOnMet(r, 'fail')).toBe(true);
    const warnOnly = buildReport({}, [r.environments[0]!]);
    expect(failOnMet(warnOnly, 'fail')).toBe(false);
    expect(failOnMet(warnOnly, 'warn')).toBe(true);
    expect(toTable(r)).toMatch(/FAIL\s+REJECT\s+b\s+spade\.exec/);
    // SPADE's verdict: spade.* alone; the workbench's own checks apart
    expect(r.environments.map((e) => [e.spade.verdict, e.workbenchVerdict])).toEqual([['accept', 'warn'], ['reject', 'pass']]);
    expect(toMarkdown(r)).toContain('| types | 0 | 1 | 0 | 1 |');
  });

  it('selects checks by id and by family, and names unknown ids', () => {
    expect(checkSelected('spade.step', ['spade.*'])).toBe(true);
    expect(checkSelected('types', ['spade.*'])).toBe(false);
    expect(checkSelected('types', undefined)).toBe(true);
    expect(validateCheckIds(['spade.*', 'tool.params', 'reset-leak', 'nope', 'x.*'])).toEqual(['nope', 'x.*']);
  });

  it('blames the running check when the interpreter dies, keeping earlier SPADE checks as passed', () => {
    const a = deadAudit({}, 'spade.step', 'the interpreter exited (code 3)', '', 5, false);
    const st = Object.fromEntries(a.checks.map((x) => [x.id, x.status]));
    expect(st['spade.reset']).toBe('pass');
    expect(st['spade.step']).toBe('fail');
    expect(st['spade.reset2']).toBe('skip');
    expect(st['timing']).toBe('skip');
    const hung = deadAudit({}, 'crash-on-action', 'killed', '', 5, true);
    expect(hung.checks.find((x) => x.id === 'timing')!.status).toBe('fail');
    expect(hung.checks.find((x) => x.id === 'crash-on-action')!.status).toBe('fail');
  });

  it('puts Monaco markers on evidence lines, errors for fail and warnings for warn', () => {
    const m = auditMarkers(
      [c('reset-leak', 'fail', { line: 20 }), c('seed-ignored', 'warn', { line: 99 }), c('crash-on-action', 'fail', { crashes: [{ line: 7 }, { line: 9 }] }), c('types', 'pass', { line: 3 })],
      50,
    );
    expect(m.map((x) => [x.code, x.startLineNumber, x.severity])).toEqual([
      ['reset-leak', 20, 8],
      ['seed-ignored', 50, 4],
      ['crash-on-action', 7, 8],
      ['crash-on-action', 9, 8],
    ]);
  });
});
