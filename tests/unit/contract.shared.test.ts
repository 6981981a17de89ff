import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { calls, hashSchema, runtimeKindSchema } from '../../core/api';

// Shared contract pieces are declared once in core/api/schemas.ts; a domain file that spells one
// out again (a hash regex, the runtime enum) would drift from the others on the next change.
const dir = join(process.cwd(), 'core', 'api', 'calls');
const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));

describe('shared contract pieces, once', () => {
  it('no calls file spells out the hash pattern or the runtime kinds itself', () => {
    for (const f of files) {
      const text = readFileSync(join(dir, f), 'utf8');
      expect(text, f).not.toMatch(/a-f\]\{64\}/);
      expect(text, f).not.toMatch(/z\.enum\(\[\s*'pyodide',\s*'cpython'\s*\]\)/);
    }
  });

  it('every call that takes a version hash accepts exactly the shared schema', () => {
    const good = 'a'.repeat(64);
    expect(hashSchema.safeParse(good).success).toBe(true);
    expect(hashSchema.safeParse('A'.repeat(64)).success).toBe(false);
    for (const name of ['memory.version', 'audit.run', 'runtime.open', 'episodes.open'] as const) {
      const input = calls[name].input;
      const key = name === 'runtime.open' ? 'versionHash' : 'hash';
      expect(input.safeParse({ [key]: good }).success, name).toBe(true);
      expect(input.safeParse({ [key]: 'nothex' }).success, name).toBe(false);
    }
    expect(runtimeKindSchema.options).toEqual(['pyodide', 'cpython']);
  });
});
