import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditPool } from '../../../core/audit/pool';

// Real CPython fork server (inside bubblewrap where it runs). The judge and the executor speak in
// lines read 64 KiB at a time: a source, a request or a reply many reads long must arrive whole.

const base = readFileSync(join(__dirname, 'fixtures', 'spade', '00_accepted.py'), 'utf8');

/** The accepted game, its source padded past several reads, its observations too. */
function longGame(sourceKb: number, obsKb: number): string {
  const padded = base.replace(
    'return "Guess a digit 1-9 with \\\\boxed{d}.", {}',
    `return "Guess a digit 1-9 with \\\\boxed{d}. " + ("%d." % self.secret) * ${Math.ceil((obsKb * 1024) / 2)}, {"pad": "p" * ${obsKb * 1024}}`,
  );
  if (padded === base) throw new Error('the fixture changed: nothing was padded');
  return `${padded}\n${`# ${'x'.repeat(1021)}\n`.repeat(sourceKb)}`;
}

let pool: AuditPool;
beforeAll(() => {
  pool = new AuditPool({ workers: 1, envTimeoutSec: 60 });
});
afterAll(async () => {
  await pool.close();
});

describe('long lines between judge and executor', () => {
  it('audits a game whose source and observations span many reads exactly as a short one', async () => {
    const short = await pool.audit(base, {});
    const long = await pool.audit(longGame(300, 200), {});
    expect(long.className).toBe('ProbeEnv');
    expect(long.checks.length).toBeGreaterThan(10);
    const statuses = (a: typeof short) => Object.fromEntries(a.checks.map((c) => [c.id, c.status]));
    // Timing and hint leakage read the observation's size and text; every other check must agree.
    const { timing: _t1, 'hint-leak': _h1, ...longRest } = statuses(long);
    const { timing: _t2, 'hint-leak': _h2, ...shortRest } = statuses(short);
    expect(longRest).toEqual(shortRest);
    expect(long.checks.filter((c) => c.status === 'fail')).toEqual([]);
    // The reset observation came back whole: the determinism check compared both runs' full text.
    const det = long.checks.find((c) => c.id === 'determinism')!;
    expect(det.status).toBe('pass');
  }, 120_000);
});
