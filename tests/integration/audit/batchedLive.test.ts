import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { probePython } from '../../../core/runtime/native';

// Real CPython running native/audit_checks.py and native/audit_exec.py in one process (our own
// fixtures only, so no sandbox). The judge sends several operations in one crossing (Audit.seq:
// SPADE's compile, exec and class; its probe steps; the seeds of seed-ignored, hint-leak and
// max-turns). Batched or asked one by one, the verdicts and evidence must be the same, and the
// game's interpreter must see exactly the same operations: a batch that played a step the checks
// would not have asked for could change the game's state, its sandbox record or its fate.
const root = join(__dirname, '..', '..', '..');
const py = (dir: string) => readdirSync(join(root, dir)).filter((f) => f.endsWith('.py') && !f.startsWith('_')).map((f) => join(root, dir, f));
const seedPack = ['games', 'tool-use'].flatMap((d) => py(join('resources', 'seed-pack', d)));

test('operations batched into one crossing give what the same operations asked one by one give', () => {
  const python = probePython();
  expect(python, 'a CPython for native runs').not.toBeNull();
  const files = [...seedPack, ...py('tests/fixtures/spade-corpus'), ...['spade', 'defects', 'ahead', 'leaks'].flatMap((d) => py(join('tests', 'integration', 'audit', 'fixtures', d)))];
  const r = spawnSync(python!.path, ['-s', join(root, 'tests', 'helpers', 'batched_live.py'), join(root, 'native'), ...files], { encoding: 'utf8', timeout: 240_000, maxBuffer: 1 << 26 });
  expect(r.status, r.stderr.slice(-3000)).toBe(0);
  const got = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as {
    files: number;
    differ: unknown[];
    playedOtherwise: unknown[];
    nondeterministic: string[];
    crossings: { live: number; batched: number };
  };
  const name = (f: string) => f.split('/').slice(-2).join('/');
  expect(got.differ).toEqual([]);
  expect(got.playedOtherwise).toEqual([]);
  expect(got.nondeterministic.map(name)).toEqual(['defects/nondeterministic.py']);
  expect(got.files).toBe(files.length - 1);
  // The comparison means something only if batches were played: SPADE's load alone saves two
  // crossings a game (compile, exec and class in one), its probe steps up to two more.
  expect(got.crossings.live - got.crossings.batched).toBeGreaterThan(got.files * 8);
}, 300_000);
