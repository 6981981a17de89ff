import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, test } from 'vitest';
import { packageRoot } from '../../core/base/appInfo';

// Issue 45: TypeScript modules stay under 500 lines, as Python's do (native.pythonShape.test.ts):
// a file past that has usually taken on a second concern. Every .ts/.tsx file under core/,
// renderer/ and electron/ is counted, subfolders included; generated and third-party folders are
// not ours to size.
const LIMIT = 500;
const FOLDERS = ['core', 'renderer', 'electron'];
const SKIP = new Set(['node_modules', 'dist', 'out', 'build']);

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const ent of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, ent.name);
    if (ent.isDirectory()) {
      if (!SKIP.has(ent.name)) out.push(...tsFiles(path));
    } else if (ent.isFile() && /\.tsx?$/.test(ent.name)) out.push(path);
  }
  return out;
}

/** Lines as `wc -l` counts them would miss a last line without a newline; this counts it. */
function lineCount(text: string): number {
  if (!text) return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

test(`core/, renderer/, electron/: no TypeScript module over ${LIMIT} lines`, () => {
  const root = packageRoot();
  const files = FOLDERS.flatMap((f) => tsFiles(join(root, f)));
  const names = files.map((f) => relative(root, f).split('\\').join('/'));
  // The walk reaches subfolders and .tsx files: a check that read only the top level would pass them unread.
  expect(names).toContain('core/memory/importer.ts');
  expect(names).toContain('renderer/src/features/runs/RunsView.tsx');
  expect(names.some((n) => n.startsWith('electron/'))).toBe(true);
  const over = files
    .map((f, i) => ({ file: names[i]!, lines: lineCount(readFileSync(f, 'utf8')) }))
    .filter((f) => f.lines > LIMIT)
    .sort((a, b) => b.lines - a.lines);
  const list = over.map((f) => `${f.file} (${f.lines} lines)`).join(', ');
  expect(over, `over ${LIMIT} lines: ${list}`).toEqual([]);
});
