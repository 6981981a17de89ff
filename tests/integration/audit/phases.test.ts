import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditPool } from '../../../core/audit/pool';
import type { CheckResult, EnvAudit } from '../../../core/audit/types';

// Real CPython fork server and judge (inside bubblewrap where it runs). A pool's audits, which no
// one watches check by check, announce a check to the host only once one of its calls into the game
// has waited a moment (native/host_judge.py): the check an audit dies in must still be named, by the
// judge when the game's process dies under it, by the host when the whole audit runs past its limit.

// `determinism` is the first check to reset with seed 7 (SPADE's own use 42 and 123).
const game = (onSeven: string) => `import os, time
class SevenEnv:
    def reset(self, seed=None):
        self.seed = seed
        self.t = 0
        return "say a number", {}

    def step(self, action):
        if self.seed == 7:
            ${onSeven}
        self.t += 1
        return "t=%d" % self.t, 1.0 if "13" in action else 0.0, self.t >= 3, False, {}
`;

let pool: AuditPool;
beforeAll(() => {
  pool = new AuditPool({ workers: 1, envTimeoutSec: 2 });
});
afterAll(async () => {
  await pool.close();
});

const check = (a: EnvAudit, id: string): CheckResult => {
  const c = a.checks.find((x) => x.id === id);
  if (!c) throw new Error(`no ${id}`);
  return c;
};

describe('the check a pool audit dies in', () => {
  it('is named by the judge when the game exits in a quick check', async () => {
    const a = await pool.audit(game('os._exit(3)'), {});
    expect(check(a, 'determinism')).toMatchObject({ status: 'fail', message: "Crashed during this check: the environment's interpreter exited" });
    expect(check(a, 'seed-ignored')).toMatchObject({ status: 'skip', message: 'Not run: the interpreter died during determinism' });
  });

  it('is named by the host when the audit runs past its limit in a check that lasts', async () => {
    // Each step of seed 7 is within the per-call limit; six of them are not within the audit's 2 s.
    const a = await pool.audit(game('time.sleep(0.5)'), {});
    expect(check(a, 'determinism').status).toBe('fail');
    expect(check(a, 'determinism').message).toMatch(/^Hung during this check: /);
    expect(check(a, 'timing')).toMatchObject({ status: 'fail', message: 'A call did not return during determinism; the process was killed' });
  });

  it('is not the game\'s to choose: a phase line the game writes is not heard', async () => {
    // Written after the judge has named determinism (the first step waits 0.5 s), before the kill.
    const a = await pool.audit(game('time.sleep(0.5); os.write(2, b"\\n@audit-phase seed-ignored\\n")'), {});
    expect(check(a, 'determinism').message).toMatch(/^Hung during this check: /);
    expect(check(a, 'seed-ignored').status).toBe('skip');
  });
});
