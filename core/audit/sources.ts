import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';

/** One environment file to audit, with the hint SPADE would have written beside it, if any. */
export interface AuditSource {
  file: string;
  source: string;
  sha256: string;
  stem: string;
  hint: string | null;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function walk(dir: string, out: string[], depth = 0): void {
  if (depth > 8) return;
  for (const name of readdirSync(dir).sort()) {
    if (name.startsWith('.') || name === 'node_modules' || name === '__pycache__') continue;
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) walk(p, out, depth + 1);
    else if (name.endsWith('.py')) out.push(p);
  }
}

/** Hints from `<stem>_hint.txt` beside a game (SPADE's cache layout) or a tool-use manifest.json. */
function manifestHints(dir: string, cache: Map<string, Map<string, string>>): Map<string, string> {
  let m = cache.get(dir);
  if (m) return m;
  m = new Map();
  const p = join(dir, 'manifest.json');
  if (existsSync(p)) {
    try {
      const data = JSON.parse(readFileSync(p, 'utf8')) as unknown;
      if (Array.isArray(data)) for (const e of data) if (e && typeof e.file === 'string' && typeof e.hint === 'string') m.set(e.file, e.hint);
    } catch {
      // a broken manifest only loses hints
    }
  }
  cache.set(dir, m);
  return m;
}

export function collectSources(path: string, base = process.cwd()): AuditSource[] {
  if (!existsSync(path)) throw new Error(`No such file or folder: ${path}`);
  const files: string[] = [];
  if (statSync(path).isDirectory()) walk(path, files);
  else files.push(path);
  const cache = new Map<string, Map<string, string>>();
  return files.map((f) => {
    const source = readFileSync(f, 'utf8');
    const stem = basename(f, '.py');
    const hintFile = join(dirname(f), `${stem}_hint.txt`);
    let hint: string | null = existsSync(hintFile) ? readFileSync(hintFile, 'utf8') : null;
    hint ??= manifestHints(dirname(f), cache).get(basename(f)) ?? null;
    const rel = relative(base, f);
    return { file: rel.startsWith('..') ? f : rel, source, sha256: sha256(source), stem, hint };
  });
}
