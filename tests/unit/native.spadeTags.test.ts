import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, test } from 'vitest';
import { TOOL_CALL_PATTERNS } from '../../core/api/spadeRules';
import { packageRoot } from '../../core/base/appInfo';

// SPADE's tag patterns (the tool-call block, its XML and JSON forms, the answer tag) have one home,
// core/api/spadeRules.ts, generated into native/spade_rules.py. A module that writes its own copy
// (native/harness_tool_base.py once did) can drift from SPADE without any test noticing.
const walk = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));

test('no module but the generated spade_rules.py and spadeRules.ts writes SPADE tag patterns', () => {
  const root = packageRoot();
  const homes = new Set(['native/spade_rules.py', 'core/api/spadeRules.ts']);
  const files = [...walk(join(root, 'native')), ...walk(join(root, 'core'))].filter((f) => /\.(py|ts)$/.test(f));
  const patterns = Object.values(TOOL_CALL_PATTERNS).map((p) => p.split('WORD').join('\\w'));
  expect(patterns.length).toBeGreaterThanOrEqual(5);
  // Each pattern as Python source writes it in a raw string, and its opening alone ("<answer>(.*?)").
  const needles = patterns.flatMap((p) => [p, p.slice(0, p.indexOf(')') + 1)]);
  const copies: string[] = [];
  for (const f of files) {
    const rel = relative(root, f).split('\\').join('/');
    if (homes.has(rel)) continue;
    const text = readFileSync(f, 'utf8');
    for (const n of needles) if (text.includes(n)) copies.push(`${rel}: ${n}`);
  }
  expect(files.length).toBeGreaterThan(30);
  expect(copies).toEqual([]);
});
