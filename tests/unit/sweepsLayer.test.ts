import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { auditSweeps } from '../../core/audit/auditStore';
import { regretSweeps } from '../../core/episodes/regretRemote';
import { openDatabase } from '../../core/memory/db';
import { registerSweepKind, sweepKindInfo } from '../../core/sweeps/kinds';
import { createSweep } from '../../core/sweeps/sweepStore';

// core/sweeps is the layer every kind of sweep plugs into (issue 45): the folders that own a kind
// import it, never the other way round, or the folder cycles it was made to end come back.
const core = path.resolve('core');
const sweepsDir = path.join(core, 'sweeps');
const KIND_OWNERS = ['audit', 'episodes', 'design'];

/** The imports of a file in core/sweeps that land in a folder owning a kind (static, type-only, re-exports, dynamic). */
function kindImports(file: string, code: string): string[] {
  return ts
    .preProcessFile(code, true, true)
    .importedFiles.map((r) => r.fileName)
    .filter((spec) => spec.startsWith('.'))
    .filter((spec) => {
      const rel = path.relative(core, path.resolve(path.dirname(file), spec)).split(path.sep);
      return KIND_OWNERS.includes(rel[0]!);
    });
}

describe('core/sweeps layer', () => {
  it('imports no folder that owns a kind of sweep', () => {
    const files = readdirSync(sweepsDir).filter((n) => n.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(10);
    const found = files.flatMap((n) => kindImports(path.join(sweepsDir, n), readFileSync(path.join(sweepsDir, n), 'utf8')).map((s) => `${n} -> ${s}`));
    expect(found).toEqual([]);
  });

  it('the check catches each way such an import can be written', () => {
    const f = path.join(sweepsDir, 'x.ts');
    expect(kindImports(f, "import { verdictOf } from '../audit/types';\n")).toEqual(['../audit/types']);
    expect(kindImports(f, "import type { JobResult } from '../episodes/regret';\n")).toEqual(['../episodes/regret']);
    expect(kindImports(f, "export { runPlays } from '../design/plays';\n")).toEqual(['../design/plays']);
    expect(kindImports(f, "const m = await import('../audit/pool');\n")).toEqual(['../audit/pool']);
    expect(kindImports(f, "import type { Db } from '../memory/db';\nimport { LineReader } from './lines';\n")).toEqual([]);
  });

  it('knows each kind its owner registered, and refuses a second kind under a taken name', () => {
    expect(sweepKindInfo('audit')).toBe(auditSweeps);
    expect(sweepKindInfo('regret')).toBe(regretSweeps);
    expect(sweepKindInfo('nonesuch')).toBeNull();
    expect(registerSweepKind(auditSweeps)).toBe(auditSweeps);
    expect(() => registerSweepKind({ ...auditSweeps, label: 'other' })).toThrow(/registered twice/);
    // A sweep of a kind no folder registered could be neither driven nor counted: refused before it is stored.
    const db = openDatabase(':memory:');
    try {
      expect(() => createSweep(db, { kind: 'nonesuch', ident: 'i', target: 'local', query: '', options: {}, items: [] })).toThrow(/No sweep kind nonesuch/);
      expect((db.prepare('SELECT COUNT(*) AS n FROM sweeps').get() as { n: number }).n).toBe(0);
    } finally {
      db.close();
    }
  });
});
