import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditPool } from '../../../core/audit/pool';
import { PyodideAuditRunner } from '../../../core/audit/pyodideRunner';
import type { EnvAudit } from '../../../core/audit/types';
import { probePython } from '../../../core/runtime/native';
import { PyodidePool } from '../../../core/runtime/pyodidePool';
import { ensureChildBuilt } from '../runtime/helpers';

// The too-easy check is SPADE's offline test_game_difficulty: guesses drawn from the game's own
// process-global random right after reset, a run won at the first reward above 0 (ended or not),
// each step converted by SPADE's wrapper. Real CPython and real Pyodide, both runtimes.
ensureChildBuilt();
const root = join(__dirname, '..', '..', '..');
const dir = join(__dirname, 'fixtures', 'too-easy');
const pyodide = new PyodidePool({ size: 1, graceMs: 2000 });
const native = new AuditPool({ workers: 2, envTimeoutSec: 20 });
const sandbox = new PyodideAuditRunner(() => pyodide, 60_000);
afterAll(async () => {
  await pyodide.shutdown();
  await native.close();
});
const tooEasy = (a: EnvAudit) => {
  const c = a.checks.find((x) => x.id === 'too-easy');
  if (!c) throw new Error('no too-easy');
  return c;
};
const runtimes = [
  ['native CPython', (s: string, callTimeoutSec = 5) => native.audit(s, { checks: ['too-easy'], callTimeoutSec })],
  ['Pyodide', (s: string, callTimeoutSec = 5) => sandbox.audit(s, { checks: ['too-easy'], callTimeoutSec })],
] as const;

describe.each(runtimes)('too-easy in %s', (_name, audit) => {
  it('draws its guesses from the game’s global random: a game that seeds it and hides its secret in a twin is won 20/20', async () => {
    const c = tooEasy(await audit(readFileSync(join(dir, 'shared_rng.py'), 'utf8')));
    expect(c.status).toBe('fail');
    expect(c.evidence.observed).toBe(1);
    expect(c.message).toBe('Random guesses win 20/20 episodes (100% > 15%)');
    // random.seed(0); randint(1, 100) is 50: the secret of seed 0 and SPADE's first guess
    expect(c.evidence).toMatchObject({ seed: 0, actions: ['\\boxed{50}'] });
  });

  it('counts a run won at the first reward above 0, even when the episode goes on', async () => {
    const c = tooEasy(await audit(readFileSync(join(dir, 'partial_reward.py'), 'utf8')));
    expect(c.status).toBe('fail');
    expect(c.evidence.observed).toBe(1);
  });

  it('plays a raising step as SPADE’s wrapper does (a -1.0 terminal step), not as a failure of the check', async () => {
    const c = tooEasy(await audit(readFileSync(join(dir, 'step_raises_on_guess.py'), 'utf8')));
    expect(c.status).toBe('pass');
    expect(c.message).toBe('Random guesses win 0/20 episodes (0%)');
  });

  it('says a guess whose draw never returns (the game replaced random.randint) hung, and goes on', async () => {
    const a = await audit(readFileSync(join(dir, 'hang_in_randint.py'), 'utf8'), 1);
    const c = tooEasy(a);
    expect(c.status).toBe('fail');
    expect(c.message).toBe('random.randint hung (no return within 1 s)');
    expect(c.evidence).toMatchObject({ call: 'random.randint', hang: true });
  });

  it('says so when SPADE’s own load in the test fails (the audit’s load went through), not an audit error', async () => {
    const c = tooEasy(await audit(readFileSync(join(dir, 'second_load_fails.py'), 'utf8')));
    expect(c.status).toBe('fail');
    expect(c.message).toMatch(/^SPADE's test loads the game again, and that load failed: .*this game loads only once/);
  });
});

it('wins as many runs as SPADE’s test written out plainly, on the seed pack and the fixtures (games that seed their random)', async () => {
  const python = probePython();
  expect(python, 'a CPython for native runs').not.toBeNull();
  const games = join(root, 'resources', 'seed-pack', 'games');
  const files = [
    ...readdirSync(games).filter((f) => f.endsWith('.py')).map((f) => join(games, f)),
    ...readdirSync(dir).filter((f) => f.endsWith('.py') && !f.startsWith('hang_') && f !== 'second_load_fails.py').map((f) => join(dir, f)),
  ];
  const r = spawnSync(python!.path, ['-s', join(root, 'tests', 'helpers', 'spade_too_easy.py'), ...files], { encoding: 'utf8', timeout: 120_000 });
  expect(r.status, r.stderr.slice(-3000)).toBe(0);
  const reference = JSON.parse(r.stdout) as Record<string, number>;
  const got = await Promise.all(files.map(async (f) => Math.round((tooEasy(await native.audit(readFileSync(f, 'utf8'), { checks: ['too-easy'] })).evidence.observed as number) * 20)));
  expect(Object.fromEntries(files.map((f, i) => [f, got[i]]))).toEqual(reference);
  // The seed pack is not all zeros: the comparison would not notice a guesser that never wins.
  expect(Object.values(reference).filter((n) => n > 0).length).toBeGreaterThanOrEqual(3);
});
