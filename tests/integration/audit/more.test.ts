import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditPool } from '../../../core/audit/pool';
import type { EnvAudit } from '../../../core/audit/types';

// Real CPython; each fixture carries one defect SPADE's loader accepts.
const dir = join(__dirname, 'fixtures');
let pool: AuditPool;
beforeAll(() => {
  pool = new AuditPool({ workers: 2, envTimeoutSec: 10 });
});
afterAll(async () => {
  await pool.close();
});
const audit = (rel: string, opts = {}) => pool.audit(readFileSync(join(dir, rel), 'utf8'), { callTimeoutSec: 1, ...opts });
const check = (a: EnvAudit, id: string) => {
  const c = a.checks.find((x) => x.id === id);
  if (!c) throw new Error(`no ${id}`);
  return c;
};

describe('checks SPADE lacks', () => {
  it('determinism: names the first divergent step', async () => {
    const a = await audit('defects/nondeterministic.py');
    const c = check(a, 'determinism');
    expect(c.status).toBe('fail');
    expect(c.evidence.step).toBe(1);
    expect(c.evidence.actions).toEqual(['\\boxed{1}']);
    expect(String(c.evidence.expected)).not.toBe(String(c.evidence.observed));
  });

  it('types: finds numpy rewards, int flags and list info on steps SPADE never probes', async () => {
    const a = await audit('defects/types_late.py');
    expect(check(a, 'spade.step').status).toBe('pass');
    const c = check(a, 'types');
    expect(c.status).toBe('fail');
    const issues = c.evidence.issues as string[];
    expect(issues).toContain('reward is not a builtin int or float');
    expect(issues).toContain('terminated is not a bool');
    expect(issues).toContain('info is not a dict');
    expect((c.evidence.actions as string[]).length).toBeGreaterThanOrEqual(4);
  });

  it("too-easy: SPADE's random-guess test rejects a coin flip", async () => {
    const c = check(await audit('defects/too_easy.py'), 'too-easy');
    expect(c.status).toBe('fail');
    expect(c.evidence.observed as number).toBeGreaterThan(0.15);
  });

  it('max-turns: a never-winning policy must reach truncation', async () => {
    const c = check(await audit('defects/never_truncates.py'), 'max-turns');
    expect(c.status).toBe('fail');
    const ok = check(await audit('spade/00_accepted.py'), 'max-turns');
    expect(ok.status).toBe('pass');
  });

  it('reset-leak: names shared state (class attribute, then module global) and the line that grows it', async () => {
    const src = readFileSync(join(dir, 'defects/class_leak.py'), 'utf8');
    const c = check(await audit('defects/class_leak.py'), 'reset-leak');
    expect(c.status).toBe('fail');
    expect(c.evidence.attributes).toEqual(['RecallEnv.seen', 'global GAMES_PLAYED']);
    expect(c.evidence.attribute).toBe('RecallEnv.seen');
    expect(c.evidence.scope).toBe('class');
    const grows = src.split('\n').findIndex((l) => l.includes('self.seen.append')) + 1;
    expect(c.evidence.line).toBe(grows);
    expect(c.evidence.growth).toEqual([{ line: grows, method: 'reset', text: 'self.seen.append(self.target)' }]);
    expect(c.message).toContain(`self.seen.append(self.target) (line ${grows}, in reset) grows it`);
  });

  it('crash-on-action: shows the action and the traceback into the game', async () => {
    const c = check(await audit('defects/crashy.py'), 'crash-on-action');
    expect(c.status).toBe('fail');
    const crashes = c.evidence.crashes as { action: string; type: string; line: number; traceback: string }[];
    expect(crashes.some((x) => x.type === 'OverflowError' && x.action.startsWith('\\boxed{9999'))).toBe(true);
    expect(crashes.some((x) => x.type === 'ZeroDivisionError' && x.action === '\\boxed{-0.0}')).toBe(true);
    expect(crashes[0]!.line).toBe(21);
    expect(crashes[0]!.traceback).toContain('File "<env>", line 21, in step');
  });

  it('hint-leak: full answer fails, none passes, no hint skips', async () => {
    expect(check(await audit('defects/crashy.py', { hint: 'The answer is 4, obviously.' }), 'hint-leak').status).toBe('fail');
    expect(check(await audit('defects/crashy.py', { hint: 'Think about division.' }), 'hint-leak').status).toBe('pass');
    expect(check(await audit('defects/crashy.py'), 'hint-leak').status).toBe('skip');
  });

  it('tool checks: invalid schema, missing method, parameter mismatch, reset gate, criteria at reset', async () => {
    const a = await audit('defects/tool_broken.py');
    expect(a.toolUse).toBe(true);
    expect(check(a, 'tool.schema').message).toContain("'list'");
    expect(check(a, 'tool.methods').message).toContain('tool_ghost');
    const p = check(a, 'tool.params');
    expect(p.status).toBe('fail');
    expect(p.evidence.observed).toEqual(['key']);
    expect(p.evidence.expected).toEqual(['name']);
    expect(check(a, 'tool.reset_gate').status).toBe('fail');
    expect(check(a, 'tool.criteria_at_reset').status).toBe('fail');
    expect(check(a, 'tool.done_reachable').status).toBe('pass');
  });

  it('tool.done_reachable reads tool calls as SPADE’s rollout does: the XML form and a name that is not a string', async () => {
    const c = check(await audit('defects/tool_spade_forms.py', { checks: ['tool.done_reachable'] }), 'tool.done_reachable');
    expect(c.message).toBe('Playing solution() finishes the task');
    expect(c.status).toBe('pass');
  });

  it('--checks selects a subset', async () => {
    const a = await audit('defects/crashy.py', { checks: ['spade.*', 'types'] });
    expect(a.checks.map((c) => c.id)).toEqual(['spade.exec', 'spade.class', 'spade.instantiate', 'spade.methods', 'spade.reset', 'spade.step', 'spade.reset2', 'spade.admission', 'types']);
  });
});

describe('hostile environments', () => {
  it('records each as a failed check with evidence while the batch goes on', async () => {
    const files = ['h1_hang_init', 'h2_hang_reset', 'h3_alloc', 'h4_print', 'h5_os_exit', 'h6_sys_exit', 'h7_c_hang', 'h8_hang_step_fuzz'];
    const sound = readFileSync(join(dir, 'spade', '00_accepted.py'), 'utf8');
    // Allocation gets a longer per-call limit: filling 2 GiB takes a moment on a busy machine.
    // SPADE's own 30 s per call would outlast the pool's 10 s here: lowered for this test only.
    const runs = files.map((f) => audit(`hostile/${f}.py`, f === 'h3_alloc' ? { callTimeoutSec: 8, spadeCallTimeoutSec: 8 } : { spadeCallTimeoutSec: 1 }));
    const after = pool.audit(sound, {});
    const r = Object.fromEntries((await Promise.all(runs)).map((a, i) => [files[i]!, a]));

    expect(check(r.h1_hang_init!, 'spade.instantiate').status).toBe('fail');
    expect(check(r.h1_hang_init!, 'spade.instantiate').evidence.hang).toBe(true);
    // SPADE's alarm raises inside reset, and its load reports that like any exception
    expect(check(r.h2_hang_reset!, 'spade.reset').message).toBe('Game reset() failed: env call timed out after 1s');
    // str(MemoryError()) is empty, so SPADE's message ends there; the evidence names the type
    expect(check(r.h3_alloc!, 'spade.reset').message).toBe('Game reset() failed: ');
    expect(String(check(r.h3_alloc!, 'spade.reset').evidence.observed)).toContain('MemoryError');
    // 100 MB of print is cut, not carried: the game itself is fine.
    expect(check(r.h4_print!, 'spade.step').status).toBe('pass');
    const ex = check(r.h5_os_exit!, 'spade.step');
    expect(ex.status).toBe('fail');
    expect(ex.message).toContain('exited');
    expect(check(r.h6_sys_exit!, 'spade.reset').status).toBe('fail');
    expect(String(check(r.h6_sys_exit!, 'spade.reset').evidence.observed)).toContain('SystemExit');
    const c = check(r.h7_c_hang!, 'spade.step');
    expect(c.status).toBe('fail');
    expect(c.message).toContain('killed');
    expect(check(r.h7_c_hang!, 'timing').status).toBe('fail');
    const fz = r.h8_hang_step_fuzz!;
    expect(check(fz, 'crash-on-action').status).toBe('fail');
    expect(check(fz, 'crash-on-action').evidence.actions).toEqual(['']);
    expect(check(fz, 'timing').status).toBe('fail');
    expect(check(fz, 'timing').message).toContain("step hung (no return within 1 s) on action ''");

    const ok = await after;
    expect(ok.checks.filter((x) => x.status === 'fail')).toEqual([]);
    expect(pool.restarts).toBeGreaterThanOrEqual(2);
  });
});
