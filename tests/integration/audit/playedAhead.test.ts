import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { probePython } from '../../../core/runtime/native';

// Real CPython running native/audit_checks.py and native/audit_exec.py in one process (our own
// fixtures only, so no sandbox): the checks that the executor plays ahead in one crossing (solution,
// reset-leak, determinism, crash-on-action, max-turns) must give exactly what they give asking every
// operation live. The executor plays them by running the judge's own check functions
// (native/exec_ahead.py), so every request it records must be the one the judge's run makes next.
const root = join(__dirname, '..', '..', '..');
const py = (dir: string) => readdirSync(join(root, dir)).filter((f) => f.endsWith('.py') && !f.startsWith('_')).map((f) => join(root, dir, f));
const seedPack = ['games', 'tool-use'].flatMap((d) => py(join('resources', 'seed-pack', d)));

test('checks played ahead give the verdicts and evidence of the same checks asked live', () => {
  const python = probePython();
  expect(python, 'a CPython for native runs').not.toBeNull();
  const files = [...seedPack, ...py('tests/fixtures/spade-corpus'), ...['spade', 'defects', 'ahead', 'leaks'].flatMap((d) => py(join('tests', 'integration', 'audit', 'fixtures', d)))];
  const r = spawnSync(python!.path, ['-s', join(root, 'tests', 'helpers', 'played_ahead.py'), join(root, 'native'), ...files], { encoding: 'utf8', timeout: 240_000, maxBuffer: 1 << 26 });
  expect(r.status, r.stderr.slice(-3000)).toBe(0);
  const got = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as {
    files: number;
    differ: unknown[];
    nondeterministic: string[];
    taken: number;
    mismatches: number;
    aheadCalls: number;
    short: Record<string, number>;
    over: Record<string, number>;
  };
  const name = (f: string) => f.split('/').slice(-2).join('/');
  expect(got.differ).toEqual([]);
  expect(got.mismatches).toBe(0);
  // Never an operation the checks do not ask for (it would change the game's state and its sandbox record).
  expect(got.over).toEqual({});
  // Never asked live inside a check played ahead: the executor runs the same code on the same
  // decoded values (numpy scalars, str and int subclasses included), so its play never stops short.
  expect(got.short).toEqual({});
  // Games that read entropy themselves cannot be compared; there is one such fixture.
  expect(got.nondeterministic.map(name)).toEqual(['defects/nondeterministic.py']);
  expect(got.files).toBe(files.length - 1);
  // The comparison means something only if the ahead path ran: five checks for most games.
  expect(got.aheadCalls).toBeGreaterThan(got.files * 3);
  expect(got.taken).toBeGreaterThan(3000);
}, 300_000);
