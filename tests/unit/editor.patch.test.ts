import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lineDiff, unifiedDiff } from '../../core/editor/patch';
import { tempDir } from '../helpers/tmp';

// The patch is checked by the real `git apply`, not by reading our own output back.
function applies(before: string, after: string): void {
  const tmp = tempDir('spade-patch-');
  try {
    const file = join(tmp.dir, 'game.py');
    writeFileSync(file, before);
    const patch = unifiedDiff(before, after, 'game.py');
    writeFileSync(join(tmp.dir, 'fix.patch'), patch);
    execFileSync('git', ['apply', '--unsafe-paths', '-p1', 'fix.patch'], { cwd: tmp.dir, stdio: 'pipe' });
    expect(readFileSync(file, 'utf8')).toBe(after);
  } finally {
    tmp.cleanup();
  }
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

describe('unified diff for write-back and patches', () => {
  it('finds the shortest edit', () => {
    const ops = lineDiff(['a', 'b', 'c', 'a', 'b', 'b', 'a'], ['c', 'b', 'a', 'b', 'a', 'c']);
    expect(ops.filter((o) => o.kind !== ' ').length).toBe(5);
    expect(ops.filter((o) => o.kind !== '+').map((o) => o.line)).toEqual(['a', 'b', 'c', 'a', 'b', 'b', 'a']);
    expect(ops.filter((o) => o.kind !== '-').map((o) => o.line)).toEqual(['c', 'b', 'a', 'b', 'a', 'c']);
  });

  it('is empty for equal texts and names the file', () => {
    expect(unifiedDiff('x\n', 'x\n', 'g.py')).toBe('');
    expect(unifiedDiff('x\n', 'y\n', 'g.py')).toBe('--- a/g.py\n+++ b/g.py\n@@ -1,1 +1,1 @@\n-x\n+y\n');
  });

  it('gives patches git apply accepts: a fix in a game, additions at the ends, a missing final newline', () => {
    const game = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n') + '\n';
    applies(game, game.replace('line 7\n', 'line 7 fixed\n').replace('line 30\n', ''));
    applies(game, `header\n${game}footer\n`);
    applies(game, game.slice(0, -1));
    applies('a\nb', 'a\nc\n');
    applies('', 'new\n');
    applies('gone\n', '');
  });

  it('round-trips random edits through git apply', () => {
    const r = rng(7);
    for (let t = 0; t < 25; t++) {
      const base = Array.from({ length: 5 + Math.floor(r() * 40) }, () => `v${Math.floor(r() * 8)}`);
      const edited = base.flatMap((l) => (r() < 0.15 ? [] : r() < 0.15 ? [l, `new${Math.floor(r() * 5)}`] : r() < 0.1 ? [`chg${l}`] : [l]));
      applies(`${base.join('\n')}\n`, `${edited.join('\n')}\n`);
    }
  });
});
