import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditPool } from '../../../core/audit/pool';
import { auditIn, PyodideAuditRunner } from '../../../core/audit/pyodideRunner';
import { verdictOf, type EnvAudit } from '../../../core/audit/types';
import { PyodidePool } from '../../../core/runtime/pyodidePool';
import { ensureChildBuilt } from '../runtime/helpers';

/**
 * Issue 46: no failing check hides behind an answer too big (or too deep, or too long an int) to
 * carry, and both runtimes say the same of such games. Real CPython in bubblewrap (one worker, then
 * a pool of three auditing at once) and real Pyodide. The Ray path: dispatch/oversizeRay.test.ts.
 */
ensureChildBuilt();
const dir = join(__dirname, 'fixtures', 'oversize');
const src = (f: string) => readFileSync(join(dir, f), 'utf8');
const check = (a: EnvAudit, id: string) => {
  const c = a.checks.find((x) => x.id === id);
  if (!c) throw new Error(`no ${id} in ${a.checks.map((x) => x.id).join(', ')}`);
  return c;
};
const opts = { callTimeoutSec: 5, spadeCallTimeoutSec: 5 };

let single: AuditPool | undefined;
let pool: AuditPool | undefined;
let pyodide: PyodidePool | undefined;
afterAll(async () => {
  await Promise.all([single?.close(), pool?.close(), pyodide?.shutdown()]);
});

function expectCrashFound(a: EnvAudit): void {
  const c = check(a, 'crash-on-action');
  expect(c.status, c.message).toBe('fail');
  expect(c.message).toContain('ValueError');
  expect((c.evidence.actions as string[])[0]).toBe('\\boxed{-1}');
  expect(verdictOf(a.checks)).toBe('fail');
  // The observation arrives as its head, length and digest: the checks that compare it still do.
  expect(check(a, 'determinism').status).toBe('pass');
  expect(a.checks.filter((x) => x.message.includes('Audit error'))).toEqual([]);
}

function expectBigReward(a: EnvAudit): void {
  // SPADE's own range test formats the reward into its message, which CPython refuses past 4,300
  // digits: SPADE rejects the game at its first probe with that error (synthetic_game_env.py:320).
  const step = check(a, 'spade.step');
  expect(step.status).toBe('fail');
  expect(step.message).toBe("Game step() failed on action 1 '\\boxed{1}': Exceeds the limit (4300 digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit");
  expect(a.checks.filter((x) => x.message.includes('Audit error') || x.message.includes('interpreter died'))).toEqual([]);
}

function expectWinRewardFlagged(a: EnvAudit): void {
  // Past the probes, the same int at a win: SPADE's wrapper's float() raises, the types check says so.
  const t = check(a, 'types');
  expect(t.status).toBe('fail');
  expect(t.evidence.issues as string[]).toContain('reward cannot be converted with float()');
  expect(a.checks.filter((x) => x.status === 'skip' && x.id !== 'hint-leak')).toEqual([]);
}

describe('native CPython', () => {
  it('one worker: the crash behind a 50 MB observation fails crash-on-action', async () => {
    single = new AuditPool({ workers: 1, envTimeoutSec: 120 });
    expectCrashFound(await single.audit(src('big_obs_crash.py'), opts));
  }, 240_000);

  it('a pool of three at once: each game judged on what it did, nothing skipped for its size', async () => {
    pool = new AuditPool({ workers: 3, envTimeoutSec: 120 });
    const [crash, reward, win, deep] = await Promise.all(['big_obs_crash.py', 'big_reward.py', 'big_win_reward.py', 'deep_info.py'].map((f) => pool!.audit(src(f), opts)));
    expectCrashFound(crash!);
    expectBigReward(reward!);
    expectWinRewardFlagged(win!);
    // SPADE's wrapper keeps only info's scalars: the deep info is no defect of SPADE's checks.
    expect(deep!.checks.filter((c) => c.id.startsWith('spade.')).map((c) => c.status)).toEqual(Array(8).fill('pass'));
    expect(check(deep!, 'crash-on-action').status).toBe('pass');
  }, 300_000);
});

describe('Pyodide: the same verdicts, and results kept across a restart', () => {
  const runner = () => new PyodideAuditRunner(() => (pyodide ??= new PyodidePool({ size: 1, graceMs: 2000 })), 120_000);
  const nativeLazy = () => (single ??= new AuditPool({ workers: 1, envTimeoutSec: 120 }));

  it('the crash behind a 50 MB observation fails crash-on-action here too', async () => {
    const r = await auditIn('pyodide', { native: nativeLazy, sandbox: runner }, src('big_obs_crash.py'), opts);
    expect(r.runtime).toBe('pyodide');
    expectCrashFound(r.audit);
  }, 240_000);

  it("a reward too long for JSON: SPADE's message at its probe, the types check past it, as natively", async () => {
    expectBigReward((await auditIn('pyodide', { native: nativeLazy, sandbox: runner }, src('big_reward.py'), opts)).audit);
    expectWinRewardFlagged((await auditIn('pyodide', { native: nativeLazy, sandbox: runner }, src('big_win_reward.py'), opts)).audit);
  }, 120_000);

  it("info too deep for WebAssembly's stack: judged in CPython, SPADE's checks pass as natively", async () => {
    const r = await auditIn('pyodide', { native: nativeLazy, sandbox: runner }, src('deep_info.py'), opts);
    expect(r.runtime).toBe('cpython');
    expect(r.why).toContain('Maximum call stack size exceeded');
    expect(r.audit.checks.filter((c) => c.id.startsWith('spade.')).map((c) => c.status)).toEqual(Array(8).fill('pass'));
  }, 240_000);

  it('checks that passed before the worker was killed at its memory limit keep their results', async () => {
    const a = await runner().audit(src('greedy_fuzz.py'), opts);
    const died = a.checks.filter((c) => c.message.startsWith('Crashed during this check'));
    expect(died.map((c) => c.message).join('\n')).toContain('Memory limit');
    for (const id of ['spade.exec', 'spade.reset', 'spade.admission', 'determinism', 'reset-leak']) {
      const c = check(a, id);
      expect(c.status, `${id}: ${c.message}`).toBe('pass');
      expect(c.message).not.toContain('interpreter died');
    }
    expect(check(a, 'seed-ignored').message).not.toContain('Not run');
    expect(verdictOf(a.checks)).toBe('fail');
  }, 240_000);
});

describe('native replay of a recursion past a raised limit', () => {
  it('ends with RecursionError and a traceback of bounded length', async () => {
    const { main } = await import('../../../core/cli/main');
    const { tempDir } = await import('../../helpers/tmp');
    const { writeFileSync } = await import('node:fs');
    const tmp = tempDir('spade-deep-recursion-');
    try {
      const actions = join(tmp.dir, 'actions.txt');
      writeFileSync(actions, '\\boxed{boom}\n');
      let out = '';
      let err = '';
      const code = await main(['replay', join(dir, 'deep_recursion.py'), '--seed', '1', '--actions', actions, '--runtime', 'cpython', '--json'], {
        out: (t) => void (out += t),
        err: (t) => void (err += t),
      });
      expect(code, err).toBe(0);
      const step = (JSON.parse(out) as { episodes: { steps: { error: { type: string; traceback: string; line: number } | null }[] }[] }).episodes[0]!.steps[1]!;
      expect(step.error!.type).toBe('RecursionError');
      // A million frames: the first and last hundred are shown, the rest counted, not extracted.
      expect(step.error!.traceback).toMatch(/\[\.\.\. 9\d{5} frames left out \.\.\.\]/);
      expect(step.error!.traceback).toContain('in search');
      expect(step.error!.line).toBe(17);
    } finally {
      tmp.cleanup();
    }
  }, 240_000);
});
