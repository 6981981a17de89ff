import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditPool } from '../../../core/audit/pool';
import { PyodideAuditRunner } from '../../../core/audit/pyodideRunner';
import type { EnvAudit } from '../../../core/audit/types';
import { PyodidePool } from '../../../core/runtime/pyodidePool';
import { ensureChildBuilt } from '../runtime/helpers';

/**
 * reset-leak must name what leaks and the line that changes it, for shared state reached in the
 * ways generated games reach it (issue 31). Each fixture marks that line with `# leak`; every
 * fixture is audited in real CPython and in the real Pyodide sandbox, and both must agree.
 */
ensureChildBuilt();
const dir = join(__dirname, 'fixtures', 'leaks');
const pyodide = new PyodidePool({ size: 1, graceMs: 2000 });
const native = new AuditPool({ workers: 2, envTimeoutSec: 10 });
const runner = new PyodideAuditRunner(() => pyodide, 20_000);
afterAll(async () => {
  await pyodide.shutdown();
  await native.close();
});

const SHAPES: [file: string, attribute: string, scope: string, method: string][] = [
  ['l00_heldout_base_extend', 'MemoryBase.seen_items', 'class', 'step'],
  ['l01_class_type_append', 'GuessHistoryEnv.history', 'class', 'step'],
  ['l02_class_nested_update', 'TallyEnv.stats', 'class', 'step'],
  ['l03_class_alias_add', 'LetterHuntEnv.guessed', 'class', 'step'],
  ['l04_class_unstable_extend', 'ShapeRecallEnv.seen_items', 'class', 'reset'],
  ['l05_module_unstable_pop', 'global POOL', 'module', 'reset'],
  ['l06_module_object_setdefault', 'global LEDGER', 'module', 'step'],
  ['l07_default_append', 'default EchoEnv.step.seen', 'default', 'step'],
  ['l08_default_kwonly_item', 'default CostEnv._cost.cache', 'default', '_cost'],
  ['l09_closure_nonlocal', 'closure make_counter.<locals>.tick.count', 'closure', 'tick'],
  ['l10_closure_lambda_add', 'closure make_memory.<locals>.<lambda>.seen', 'closure', 'make_memory'],
  ['l11_hostile_values', 'Helper.store', 'class', 'step'],
];

const leakCheck = (a: EnvAudit) => {
  const c = a.checks.find((x) => x.id === 'reset-leak');
  if (!c) throw new Error(`no reset-leak in ${a.checks.map((x) => `${x.id}:${x.status}`).join(', ')}`);
  return c;
};

describe('reset-leak names the leaking state and the line that changes it', () => {
  it.each(SHAPES)('%s: %s', async (file, attribute, scope, method) => {
    const source = readFileSync(join(dir, `${file}.py`), 'utf8');
    const lines = source.split('\n');
    const line = lines.findIndex((l) => l.includes('# leak')) + 1;
    expect(line, 'the fixture marks its leaking line').toBeGreaterThan(0);
    const text = lines[line - 1]!.trim();
    const [inNative, inSandbox] = await Promise.all([native.audit(source, { checks: ['reset-leak'] }), runner.audit(source, { checks: ['reset-leak'] })]);
    for (const [runtime, a] of [['native', inNative], ['pyodide', inSandbox]] as const) {
      const c = leakCheck(a);
      const where = `${runtime}: ${c.message}`;
      expect(c.status, where).toBe('fail');
      expect(c.evidence.attribute, where).toBe(attribute);
      expect(c.evidence.scope, where).toBe(scope);
      expect(c.evidence.line, where).toBe(line);
      expect((c.evidence.growth as { line: number; method: string; text: string }[])[0], where).toEqual({ line, method, text });
      expect(c.message, where).toContain(`${attribute}`);
      expect(c.message, where).toContain(`(line ${line}, in ${method}) grows it`);
    }
  }, 120_000);
});
