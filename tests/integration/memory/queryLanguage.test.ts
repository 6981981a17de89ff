import { afterEach, expect, it } from 'vitest';
import { dirname, join } from 'node:path';
import { main } from '../../../core/cli/main';
import { openDatabase, type Db } from '../../../core/memory/db';
import { ingest, matchingIds, search, selectIds } from '../../../core/memory/repository';
import { sha256 } from '../../../core/memory/parse';
import { saveAudit } from '../../../core/audit/auditStore';
import { poolItems } from '../../../core/audit/poolAudit';
import { regretItems } from '../../../core/runs/regretSweep';
import { DomainError } from '../../../core/errors';
import { tempDir } from '../../helpers/tmp';
import { gameSource } from './fixtures';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function library(): Db {
  const tmp = tempDir('spade-query-');
  const db = openDatabase(join(tmp.dir, 'workbench.sqlite'));
  cleanups.push(() => {
    db.close();
    tmp.cleanup();
  });
  return db;
}

/** A game that seeds its own generator with `random.Random(seed)` (the phrase), or the module's. */
const ownRng = (n: number) => gameSource(n).replace('random.seed(seed)', 'self.rng = random.Random(seed)');
// The other games name `random`, `Random` and `seed` too, apart: only the phrase tells them apart.
const apart = (n: number) => gameSource(n, `Puzzle${n}Env`, 'uses Random numbers; see random.seed(seed)');

const names = (db: Db, query: string) =>
  search(db, { query, limit: 100 })
    .rows.map((r) => r.name)
    .sort();

it('a phrase with punctuation matches only where it is written, quoted or not (it matched almost every game before)', () => {
  const db = library();
  for (const n of [1, 2]) ingest(db, { source: ownRng(n), path: `own${n}.py` });
  for (const n of [3, 4, 5, 6]) ingest(db, { source: apart(n), path: `apart${n}.py` });
  expect(names(db, 'random.Random(seed)')).toEqual(['Puzzle1Env', 'Puzzle2Env']);
  expect(names(db, '"random.Random(seed)"')).toEqual(['Puzzle1Env', 'Puzzle2Env']);
  // As it is typed, the phrase narrows: a prefix of it already excludes the others.
  expect(names(db, 'random.Random(se')).toEqual(['Puzzle1Env', 'Puzzle2Env']);
  // A quoted phrase of plain words is adjacent words, in order.
  expect(names(db, '"numbers random"')).toEqual([]);
  expect(names(db, '"uses random numbers"')).toEqual(['Puzzle3Env', 'Puzzle4Env', 'Puzzle5Env', 'Puzzle6Env']);
  // Plain words still match anywhere; a hostile query is text, never FTS syntax or SQL.
  expect(names(db, 'hidden number')).toHaveLength(6);
  expect(names(db, '"); DROP TABLE environments; --')).toEqual([]);
  expect(search(db, { query: '' }).total).toBe(6);
});

it('tag:, skill:, seed, verdict:, run: and hash: select a curated set wherever a selection is asked for', async () => {
  const db = library();
  const src = (n: number) => gameSource(n);
  for (const n of [1, 2, 3, 4, 5]) ingest(db, { source: src(n), path: `g${n}.py`, skill: n <= 2 ? 'Logic' : 'Planning', run: n === 5 ? 'run-7' : null, seed: n === 4 });
  const ids = new Map(search(db, { limit: 10 }).rows.map((r) => [r.name, r.id]));
  const id = (n: number) => ids.get(`Puzzle${n}Env`)!;
  db.prepare('INSERT INTO tags (env_id, tag) VALUES (?, ?), (?, ?)').run(id(1), 'audit-clean', id(3), 'audit-clean');
  const audit = (status: 'pass' | 'fail') => ({ className: 'X', toolUse: false, elapsedMs: 1, checks: [{ id: 'reset-leak', status, message: '', evidence: {} }] });
  saveAudit(db, sha256(src(1)), audit('pass'), { toolVersion: 't' });
  saveAudit(db, sha256(src(2)), audit('fail'), { toolVersion: 't' });

  expect(names(db, 'tag:audit-clean')).toEqual(['Puzzle1Env', 'Puzzle3Env']);
  expect(names(db, 'tag:"audit-clean" skill:Logic')).toEqual(['Puzzle1Env']);
  expect(names(db, 'skill:Logic skill:Planning')).toHaveLength(5);
  expect(names(db, 'seed')).toEqual(['Puzzle4Env']);
  expect(names(db, 'is:seed')).toEqual(['Puzzle4Env']);
  expect(names(db, '"seed"')).toHaveLength(5);
  expect(names(db, 'verdict:fail')).toEqual(['Puzzle2Env']);
  expect(names(db, 'verdict:reset-leak=pass')).toEqual(['Puzzle1Env']);
  expect(names(db, 'run:run-7')).toEqual(['Puzzle5Env']);
  expect(names(db, `hash:${sha256(src(3)).slice(0, 10)}`)).toEqual(['Puzzle3Env']);
  // Words and operators together: the text must match as well.
  expect(names(db, 'tag:audit-clean number 3')).toEqual(['Puzzle3Env']);
  expect(names(db, 'tag:')).toHaveLength(5);

  // The same set where a selection is asked for: pool audits (CLI and Pool page), regret sweeps
  // (CLI and Runs page), the design round's seeds (CLI --seeds-from and Design page), exports.
  const want = [sha256(src(1)), sha256(src(3))].sort();
  expect(poolItems(db, 'tag:audit-clean', {}).map((i) => i.sha256).sort()).toEqual(want);
  expect([...new Set(regretItems(db, 'tag:audit-clean', 1, 0).map((i) => i.sha256))].sort()).toEqual(want);
  expect(matchingIds(db, { query: 'tag:audit-clean' }).ids.sort()).toEqual([id(1), id(3)].sort());
  expect(selectIds(db, { query: 'tag:audit-clean' })).toEqual([id(1), id(3)].sort((a, b) => a - b));

  // The CLI's selections read the same language: search, and export --query.
  const dataDb = db.name;
  let out = '';
  const io = { out: (t: string) => void (out += `${t}\n`), err: (t: string) => void (out += `${t}\n`) };
  expect(await main(['search', 'tag:audit-clean', '--json', '--data-dir', dirname(dataDb)], io)).toBe(0);
  expect((JSON.parse(out) as { rows: { name: string }[] }).rows.map((r) => r.name).sort()).toEqual(['Puzzle1Env', 'Puzzle3Env']);
  out = '';
  const exported = join(dirname(dataDb), 'curated');
  expect(await main(['export', '--query', 'tag:audit-clean skill:Logic', exported, '--data-dir', dirname(dataDb)], io)).toBe(0);
  expect(out).toMatch(/^Exported 1 environment\(s\)/);

  // A known operator with a value it cannot take is a clear error, not an empty set.
  for (const bad of ['verdict:maybe', 'hash:xyz', 'is:nothing']) {
    expect(() => search(db, { query: bad })).toThrow(DomainError);
  }
  expect(() => search(db, { query: 'verdict:maybe' })).toThrow(/verdict: takes pass, warn or fail/);
});
