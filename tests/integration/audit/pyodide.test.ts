import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditPool } from '../../../core/audit/pool';
import { needsNativeModule, PyodideAuditRunner } from '../../../core/audit/pyodideRunner';
import type { EnvAudit } from '../../../core/audit/types';
import { PyodidePool } from '../../../core/runtime/pyodidePool';
import { packageRoot } from '../../../core/base/appInfo';
import { ensureChildBuilt } from '../runtime/helpers';

/** Audits inside the Pyodide sandbox: the same verdicts as native CPython, and hostile games contained. */
ensureChildBuilt();
const dir = join(__dirname, 'fixtures');
const pyodide = new PyodidePool({ size: 2, graceMs: 2000 });
const native = new AuditPool({ workers: 2, envTimeoutSec: 10 });
afterAll(async () => {
  await pyodide.shutdown();
  await native.close();
});
const runner = new PyodideAuditRunner(() => pyodide, 10_000);
const check = (a: EnvAudit, id: string) => {
  const c = a.checks.find((x) => x.id === id);
  if (!c) throw new Error(`no ${id}`);
  return c;
};
const statuses = (a: EnvAudit) => a.checks.map((c) => `${c.id}:${c.status}`);

function seedPack(): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const n of readdirSync(d).sort()) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else if (n.endsWith('.py')) out.push(p);
    }
  };
  walk(join(packageRoot(), 'resources', 'seed-pack'));
  return out;
}

describe('audits in the Pyodide sandbox', () => {
  it('give every seed-pack environment the statuses native CPython gives it (numpy games are sent native)', async () => {
    const files = seedPack();
    expect(files.length).toBeGreaterThanOrEqual(21);
    let sentNative = 0;
    for (const f of files) {
      const source = readFileSync(f, 'utf8');
      const [inSandbox, inNative] = await Promise.all([runner.audit(source, { maxTurns: 25 }), native.audit(source, { maxTurns: 25 })]);
      if (needsNativeModule(inSandbox)) {
        sentNative++;
        continue;
      }
      expect(statuses(inSandbox), f).toEqual(statuses(inNative));
    }
    expect(sentNative).toBe(1); // the one seed-pack game that imports numpy
  });

  it('records each hostile game as a failed check with evidence, and the next audit is clean', async () => {
    const files = ['h1_hang_init', 'h2_hang_reset', 'h3_alloc', 'h4_print', 'h5_os_exit', 'h6_sys_exit', 'h7_c_hang', 'h8_hang_step_fuzz'];
    const r: Record<string, EnvAudit> = {};
    await Promise.all(files.map(async (f) => (r[f] = await runner.audit(readFileSync(join(dir, 'hostile', `${f}.py`), 'utf8'), { callTimeoutSec: 1, spadeCallTimeoutSec: 1 }))));
    // Per-call limits reach the child's watchdog: a hang fails its own check within about a second.
    expect(check(r.h1_hang_init!, 'spade.instantiate').status).toBe('fail');
    expect(check(r.h1_hang_init!, 'spade.instantiate').evidence.hang).toBe(true);
    expect(check(r.h2_hang_reset!, 'spade.reset').message).toBe('Game reset() failed: env call timed out after 1s');
    // The memory cap kills that interpreter; audits queued behind it run on the replacement.
    expect(check(r.h3_alloc!, 'spade.reset').status).toBe('fail');
    expect(check(r.h3_alloc!, 'spade.reset').message).toContain('Memory limit');
    expect(check(r.h4_print!, 'spade.step').status).toBe('pass');
    expect(check(r.h5_os_exit!, 'spade.step').status).toBe('fail');
    expect(check(r.h5_os_exit!, 'spade.step').message).toContain('exit');
    expect(String(check(r.h6_sys_exit!, 'spade.reset').evidence.observed)).toContain('SystemExit');
    // A hang inside C code ignores the interrupt: the whole command's limit ends it.
    expect(check(r.h7_c_hang!, 'spade.step').status).toBe('fail');
    expect(check(r.h7_c_hang!, 'spade.step').message).toMatch(/^Hung/);
    expect(check(r.h7_c_hang!, 'timing').status).toBe('fail');
    const fz = r.h8_hang_step_fuzz!;
    expect(check(fz, 'crash-on-action').status).toBe('fail');
    expect(check(fz, 'crash-on-action').evidence.actions).toEqual(['']);
    expect(check(fz, 'timing').message).toContain("step hung (no return within 1 s) on action ''");
    for (const f of files) expect(r[f]!.checks.every((c) => !/this session is gone/.test(c.message)), f).toBe(true);
    expect(pyodide.status().restarted).toBeGreaterThanOrEqual(3);

    const ok = await runner.audit(readFileSync(join(dir, 'spade', '00_accepted.py'), 'utf8'), {});
    expect(ok.checks.filter((x) => x.status === 'fail')).toEqual([]);
  });
});
