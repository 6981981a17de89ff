/**
 * SPADE's hinted seeds, `hash(game_file + str(i)) % 2**31` (spade/core/orchestrator.py:1951, :1962,
 * :1973 at 9b2b813), against the CPython that runs the workbench's games: the same strings hashed
 * by Python itself under the same PYTHONHASHSEED, never numbers written down here.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pyHashSecret, pyStrHash, spadeHintSeeds } from '../../core/episodes/spadeSeeds';

const venv = process.env.SPADE_WORKBENCH_VENV ?? '';
const python = existsSync(join(venv, 'bin', 'python')) ? join(venv, 'bin', 'python') : 'python3';

function pythonSays(hashSeed: number, paths: string[], n: number): { hashes: string[]; seeds: number[][]; version: number[] } {
  const script = [
    'import json, sys',
    'paths = json.loads(sys.argv[1]); n = int(sys.argv[2])',
    'print(json.dumps({"hashes": [str(hash(p)) for p in paths], "seeds": [[hash(p + str(i)) % (2**31) for i in range(n)] for p in paths], "version": list(sys.version_info[:2])}))',
  ].join('\n');
  return JSON.parse(execFileSync(python, ['-c', script, JSON.stringify(paths), String(n)], { encoding: 'utf8', env: { ...process.env, PYTHONHASHSEED: String(hashSeed) } })) as never;
}

// ASCII, Latin-1, the BMP and beyond it (1, 2 and 4 bytes a character in CPython), short and long, a
// path as SPADE's games directory names them, and the empty string.
const PATHS = ['', 'a', '/data/spade_games/step_00004/game_3f2a.py', 'jeux/énigme.py', 'игры/игра€.py', 'games/😀/g.py', 'x'.repeat(8), 'y'.repeat(23)];

describe('SPADE hint seeds (Python str hash)', () => {
  for (const hashSeed of [0, 1, 42, 4294967295]) {
    it(`match CPython under PYTHONHASHSEED=${hashSeed}`, () => {
      const py = pythonSays(hashSeed, PATHS, 16);
      const algo = py.version[0]! > 3 || py.version[1]! >= 11 ? 'siphash13' : 'siphash24';
      expect(PATHS.map((p) => pyStrHash(p, hashSeed, algo).toString())).toEqual(py.hashes);
      expect(PATHS.map((p) => spadeHintSeeds(p, 16, hashSeed, algo))).toEqual(py.seeds);
    });
  }

  it('differ between hash seeds and between plays', () => {
    const a = spadeHintSeeds('g.py', 16, 0);
    expect(new Set(a).size).toBe(16);
    expect(spadeHintSeeds('g.py', 16, 7)).not.toEqual(a);
    expect(a.every((s) => Number.isInteger(s) && s >= 0 && s < 2 ** 31)).toBe(true);
  });

  it('refuses a PYTHONHASHSEED Python refuses', () => {
    for (const bad of [-1, 1.5, 2 ** 32]) expect(() => pyHashSecret(bad)).toThrow(/PYTHONHASHSEED/);
  });
});
