import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditPool } from '../../../core/audit/pool';
import { collectSources } from '../../../core/audit/sources';
import { spadeAccepts, verdictOf, type EnvAudit } from '../../../core/audit/types';

// Real CPython processes running native/audit_checks.py through native/cpython_main.py.
const root = join(__dirname, '..', '..', '..');
const fixtures = join(__dirname, 'fixtures');
let pool: AuditPool;

beforeAll(() => {
  pool = new AuditPool({ workers: 2, envTimeoutSec: 8 });
});
afterAll(async () => {
  await pool.close();
});

function check(a: EnvAudit, id: string) {
  const c = a.checks.find((x) => x.id === id);
  if (!c) throw new Error(`no check ${id} in ${a.checks.map((x) => x.id).join(',')}`);
  return c;
}

describe('seed pack', () => {
  const sources = collectSources(join(root, 'resources', 'seed-pack'));
  const results = new Map<string, EnvAudit>();
  const spec = (file: string): { defect: string | null } => {
    try {
      return JSON.parse(readFileSync(join(root, file.replace(/\.py$/, '.json')), 'utf8'));
    } catch {
      return { defect: null };
    }
  };

  beforeAll(async () => {
    await Promise.all(sources.map(async (s) => results.set(s.stem, await pool.audit(s.source, { hint: s.hint }))));
  });

  // Defect kind in the seed pack's spec -> the check that must catch it, and its status.
  const expected: Record<string, [string, 'fail' | 'warn']> = {
    state_leak: ['reset-leak', 'fail'],
    ignores_seed: ['seed-ignored', 'warn'],
    unwinnable: ['solution', 'fail'],
    hint_leak: ['hint-leak', 'fail'],
  };

  it('catches every deliberate defect with the right check', () => {
    let defects = 0;
    for (const s of sources) {
      const d = spec(join('resources', 'seed-pack', s.file.split('resources/seed-pack/')[1] ?? s.file)).defect;
      if (!d) continue;
      const kind = d.split(':')[0]!;
      const want = expected[kind];
      expect(want, `unknown defect kind ${kind}`).toBeDefined();
      defects++;
      const a = results.get(s.stem)!;
      expect(check(a, want![0]).status, `${s.stem}: ${kind}`).toBe(want![1]);
      expect(spadeAccepts(a.checks), `${s.stem}: SPADE accepts these`).toBe(true);
    }
    expect(defects).toBeGreaterThanOrEqual(4);
  });

  it('names the leaking attribute, the unwinnable seed and the leaked answer', () => {
    const leak = results.get('game_00000_013_mathematical_reasoning')!;
    const leakCheck = check(leak, 'reset-leak');
    expect(leakCheck.evidence.attributes).toEqual(['self.asked']);
    // ...and the line that grows it: the append in reset(), not reset's def line
    expect(leakCheck.evidence).toMatchObject({ attribute: 'self.asked', scope: 'instance', line: 29 });
    expect(leakCheck.evidence.growth).toEqual([{ line: 29, method: 'reset', text: 'self.asked.append(problem)' }]);
    const un = check(results.get('game_00000_015_logical_deduction')!, 'solution');
    expect(un.evidence.seed).toBe(0);
    expect((un.evidence.actions as string[]).length).toBeGreaterThan(0);
    expect(check(results.get('game_00000_016_logical_deduction')!, 'hint-leak').evidence.answer).toBe('silver');
  });

  it('passes the sound environments', () => {
    for (const s of sources) {
      if (spec(join('resources', 'seed-pack', s.file.split('resources/seed-pack/')[1] ?? s.file)).defect) continue;
      const a = results.get(s.stem)!;
      expect(verdictOf(a.checks), `${s.stem}: ${JSON.stringify(a.checks.filter((c) => c.status !== 'pass' && c.status !== 'skip'))}`).toBe('pass');
    }
  });

  it('runs the tool checks on tool-use environments', () => {
    const tool = [...results.entries()].filter(([stem]) => stem.startsWith('tooluse_'));
    expect(tool.length).toBeGreaterThan(0);
    for (const [stem, a] of tool) {
      expect(a.toolUse, stem).toBe(true);
      for (const id of ['tool.schema', 'tool.methods', 'tool.params', 'tool.done_reachable']) expect(check(a, id).status, `${stem} ${id}`).toBe('pass');
    }
  });
});

describe("SPADE's load checks", () => {
  // fixture -> [first failing spade check (or null when SPADE accepts), SPADE's message prefix]
  const want: Record<string, [string | null, string]> = {
    '00_accepted': [null, ''],
    '01_syntax': ['spade.exec', 'Syntax error in generated game code'],
    '02_exec': ['spade.exec', 'Failed to execute game code'],
    '03_no_class': ['spade.class', 'No valid game class found'],
    '04_instantiate': ['spade.instantiate', 'Failed to instantiate game class'],
    '05_missing_method': ['spade.methods', 'Game class missing required method: step'],
    '06_reset_empty': ['spade.reset', 'Game reset() failed'],
    '07_reset_info_list': ['spade.reset', 'Game reset() failed'],
    '08_step_numpy_reward': ['spade.step', 'Game step() failed on action 1'],
    '09_step_numpy_bool': ['spade.step', 'Game step() failed on action 1'],
    '10_step_range': ['spade.step', 'Game step() failed on action 1'],
    '11_step_raises_on_test': ['spade.step', 'Game step() failed on action 2'],
    '12_second_reset': ['spade.reset2', 'Game reset() failed on second call'],
    '13_helper_trap': ['spade.methods', 'Game class missing required method: step'],
    '14_bare_str_reset': [null, ''],
  };
  const files = readdirSync(join(fixtures, 'spade')).filter((f) => f.endsWith('.py'));

  it('stops at the same check with the same message as SPADE, and skips the rest', async () => {
    expect(files.length).toBe(Object.keys(want).length);
    for (const f of files) {
      const a = await pool.audit(readFileSync(join(fixtures, 'spade', f), 'utf8'), {});
      const [first, msg] = want[f.replace('.py', '')]!;
      const spade = a.checks.filter((c) => c.id.startsWith('spade.'));
      const firstFail = spade.find((c) => c.status === 'fail');
      expect(firstFail?.id ?? null, f).toBe(first);
      expect(spadeAccepts(a.checks), f).toBe(first === null);
      if (firstFail) {
        expect(firstFail.message.startsWith(msg), `${f}: ${firstFail.message}`).toBe(true);
        const after = spade.slice(spade.indexOf(firstFail) + 1);
        expect(after.every((c) => c.status === 'skip'), f).toBe(true);
        // Play checks never run on what SPADE rejects (sandbox and output-flood judge whatever code did run).
        expect(a.checks.filter((c) => !c.id.startsWith('spade.') && c.id !== 'sandbox' && c.id !== 'output-flood').every((c) => c.status === 'skip'), f).toBe(true);
        expect(a.checks.find((c) => c.id === 'output-flood')?.status, f).toBe('pass');
      }
    }
  });

  it('shows evidence: line of a syntax error, traceback of an exec error, the probe action', async () => {
    const syn = await pool.audit(readFileSync(join(fixtures, 'spade', '01_syntax.py'), 'utf8'));
    expect(check(syn, 'spade.exec').evidence.line).toBe(2);
    const ex = await pool.audit(readFileSync(join(fixtures, 'spade', '02_exec.py'), 'utf8'));
    expect(String(check(ex, 'spade.exec').evidence.traceback)).toContain('undefined_name');
    expect(check(ex, 'spade.exec').evidence.line).toBe(2);
    const st = await pool.audit(readFileSync(join(fixtures, 'spade', '11_step_raises_on_test.py'), 'utf8'));
    expect(check(st, 'spade.step').evidence.actions).toEqual(['\\boxed{1}', '\\boxed{test}']);
  });
});
