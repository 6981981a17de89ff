import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../core/base/appInfo';

const root = packageRoot();
/** Where code and pages cite documents; the issue asks that every one cited there exists. */
const SCANNED = ['core', 'renderer', 'electron', 'native', 'scripts', 'bench', 'tests', 'docs', 'README.md'];
const TEXT = /\.(ts|tsx|mts|cts|js|mjs|cjs|py|md|sh|json|css|html)$/;
const SKIP = new Set(['node_modules', 'dist', '__pycache__', '.git', 'fixtures']);

function files(path: string, out: string[] = []): string[] {
  if (!existsSync(path)) return out;
  if (statSync(path).isFile()) {
    if (TEXT.test(path)) out.push(path);
    return out;
  }
  for (const name of readdirSync(path)) if (!SKIP.has(name)) files(join(path, name), out);
  return out;
}

/**
 * `docs/...` and `bench/notes/...` paths named anywhere in a text, as written from the repository
 * root (not part of a longer path or a URL: `example.com/docs/x` is not ours).
 */
function citedPaths(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/(?<![\w./-])((?:docs|bench\/notes)\/[\w./-]*\w)/g)) out.add(m[1]!);
  return [...out];
}

/** Relative links of a markdown page (`[x](other.md)`, `[x](../native/README.md#protocol)`), without anchors. */
function relativeLinks(markdown: string): string[] {
  const out = new Set<string>();
  for (const m of markdown.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)) {
    const target = m[1]!;
    if (!/^[a-z][a-z+.-]*:/i.test(target) && !target.startsWith('/')) out.add(target);
  }
  return [...out];
}

describe('every cited document exists', () => {
  it('finds the citations it is meant to find, and not the ones that are not ours', () => {
    expect(citedPaths('see docs/PROTOCOL, and (docs/scale.md). or bench/notes/x.md; https://example.com/docs/y tests/docs/z')).toEqual(['docs/PROTOCOL', 'docs/scale.md', 'bench/notes/x.md']);
    expect(relativeLinks('[a](spade-formats.md) [b](../native/README.md#protocol) [c](https://x.org/a.md) [d](#top)')).toEqual(['spade-formats.md', '../native/README.md']);
  });

  it('has every docs/ and bench/notes/ path cited in the code, the tests and the pages', () => {
    const missing: string[] = [];
    let seen = 0;
    // This file's own examples (above) are not citations.
    for (const f of SCANNED.flatMap((p) => files(join(root, p))).filter((f) => !f.endsWith('docs.citations.test.ts'))) {
      for (const cited of citedPaths(readFileSync(f, 'utf8'))) {
        seen++;
        if (!existsSync(join(root, cited))) missing.push(`${relative(root, f)} cites ${cited}`);
      }
    }
    expect(seen).toBeGreaterThan(10);
    expect(missing).toEqual([]);
  });

  it('has the target of every relative link in the pages', () => {
    const pages = [join(root, 'README.md'), join(root, 'native', 'README.md'), ...files(join(root, 'docs')), ...files(join(root, 'bench', 'notes'))].filter((f) => f.endsWith('.md'));
    const missing: string[] = [];
    for (const page of pages) {
      for (const link of relativeLinks(readFileSync(page, 'utf8'))) {
        if (!existsSync(join(dirname(page), decodeURIComponent(link)))) missing.push(`${relative(root, page)} links ${link}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
