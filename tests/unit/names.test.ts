import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runtimeArg, UsageError } from '../../core/cli/command';
import { packageRoot } from '../../core/base/appInfo';

const root = packageRoot();

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (/\.tsx?$/.test(name)) out.push(p);
  }
  return out;
}

const files = ['core', 'renderer/src', 'electron', 'bench'].flatMap((d) => sources(join(root, d)));
const text = new Map(files.map((f) => [relative(root, f), readFileSync(f, 'utf8')]));

/** Where each hit is, as `file: line`. */
function where(re: RegExp, skip: (file: string) => boolean = () => false): string[] {
  const out: string[] = [];
  for (const [file, body] of text) {
    if (skip(file)) continue;
    body.split('\n').forEach((line, i) => {
      if (re.test(line)) out.push(`${file}:${i + 1}: ${line.trim().slice(0, 120)}`);
    });
  }
  return out;
}

describe('one name per concept (issue 45)', () => {
  it('spells the runtime kind once: core/api/runtimeKinds.ts (schemas.ts types it), and every other module names RuntimeKind or RuntimeChoice', () => {
    const definition = (f: string) => f === join('core', 'api', 'schemas.ts');
    expect(where(/\[\s*'(pyodide|cpython)',\s*'(pyodide|cpython)'/, (f) => f === join('core', 'api', 'runtimeKinds.ts'))).toEqual([]);
    expect(where(/'pyodide'\s*\|\s*'cpython'|'cpython'\s*\|\s*'pyodide'|z\.enum\(\[\s*'(pyodide|cpython)'/, definition)).toEqual([]);
    expect(where(/\b(AuditRuntime|AuditRuntimeKind|RuntimeKindName)\b/)).toEqual([]);
    // Defined once; other modules may re-export that one type under the same name, never define another.
    expect(where(/^export type (RuntimeKind|RuntimeChoice)\s*=/)).toEqual([`core/api/schemas.ts:${lineOf('core/api/schemas.ts', 'export type RuntimeKind =')}: export type RuntimeKind = z.infer<typeof runtimeKindSchema>;`, `core/api/schemas.ts:${lineOf('core/api/schemas.ts', 'export type RuntimeChoice =')}: export type RuntimeChoice = z.infer<typeof runtimeChoiceSchema>;`]);
  });

  it('gives StepRecord and PyValue one type each', () => {
    expect(where(/^export (type|interface) StepRecord\b/).map((h) => h.split(':')[0])).toEqual([join('core', 'episodes', 'episodeStore.ts')]);
    expect(where(/^export (type|interface) PyValue\b/).map((h) => h.split(':')[0])).toEqual([join('core', 'models', 'pythonJson.ts')]);
  });

  it('names every store file of core/ one way: <thing>Store.ts', () => {
    // store.ts, xStore.ts and x-store.ts were three styles; one is left (issue 45).
    const stores = [...text.keys()].filter((f) => f.startsWith('core') && /store\.ts$/i.test(f));
    expect(stores.length).toBeGreaterThan(5);
    expect(stores.filter((f) => !/\/[a-z][A-Za-z]*Store\.ts$/.test(f))).toEqual([]);
  });

  it('reads --runtime in the contract spellings only', () => {
    expect(runtimeArg(undefined, 'auto')).toBe('auto');
    expect(runtimeArg('cpython', 'auto')).toBe('cpython');
    expect(runtimeArg(undefined, 'cpython', true)).toBe('cpython');
    expect(() => runtimeArg('native', 'auto')).toThrow(UsageError);
    expect(() => runtimeArg('auto', 'cpython', true)).toThrow('--runtime must be pyodide or cpython, got auto');
    expect(() => runtimeArg('CPython', 'auto')).toThrow('--runtime must be auto, pyodide or cpython, got CPython');
  });
});

function lineOf(file: string, start: string): number {
  return text.get(file)!.split('\n').findIndex((l) => l.startsWith(start)) + 1;
}
