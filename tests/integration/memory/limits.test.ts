// What the workbench stores and exports, it imports: one limit for a source and one for a hint
// (core/api/limits.ts) wherever they are stored (import, ingest, the API, design rounds), exported
// and imported. Before, a design round stored a 2 MiB hint that `export` wrote and the import of
// that export skipped as "too large (the limit is 1048576)"; the API refused hints over 20,000
// characters that an import had stored; a JSONL export of a large game with quotes was "line too long".
import { afterEach, expect, it } from 'vitest';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../../core/memory/db';
import { importPaths } from '../../../core/memory/importer';
import { exportEnvironments } from '../../../core/memory/exporter';
import { RunStore } from '../../../core/runs/runStore';
import { getEnvironment, ingest, search, selectIds } from '../../../core/memory/repository';
import { MAX_HINT_BYTES, MAX_SOURCE_BYTES } from '../../../core/api/limits';
import { createHandlers } from '../../../core/handlers';
import { createDispatcher } from '../../../core/server/dispatcher';
import { createInProcessBackend } from '../../../core/server/inProcess';
import { Services } from '../../../core/services/services';
import { tempDir } from '../../helpers/tmp';
import { gameSource, write } from './fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function lib(dir: string, name: string): Db {
  const db = openDatabase(join(dir, name));
  cleanups.push(() => void db.close());
  return db;
}

/** A hint of exactly `bytes` UTF-8 bytes, with two-byte characters in it (bytes, not characters, are counted). */
const hintOf = (bytes: number) => {
  const head = 'Think first. é'.repeat(100);
  const headBytes = Buffer.byteLength(head);
  return head + 'h'.repeat(bytes - headBytes);
};

it('stores a hint up to the limit and brings it back whole through both export formats; refuses one over it when storing, not on the way back', async () => {
  const tmp = tempDir('spade-limits-');
  cleanups.push(tmp.cleanup);
  const db = lib(tmp.dir, 'a.sqlite');
  const atLimit = hintOf(MAX_HINT_BYTES);
  expect(Buffer.byteLength(atLimit)).toBe(MAX_HINT_BYTES);
  // A source near its limit, full of quotes and newlines (JSON doubles them): one JSONL line.
  const body = `${gameSource(1, 'BigEnv')}\n${'# "quoted" \\\\ line\n'.repeat(Math.floor((MAX_SOURCE_BYTES - 2000) / 20))}`;
  expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_SOURCE_BYTES);
  ingest(db, { source: body, path: 'big.py', hint: atLimit });

  // Over the limit: refused where it would be stored, with what the limit is.
  expect(() => ingest(db, { source: gameSource(2, 'HugeHintEnv'), path: 'huge.py', hint: hintOf(2 * 1024 * 1024) })).toThrow(/hint is too large \(\d+ bytes; the limit is 1048576\)/);
  expect(search(db, { query: 'HugeHintEnv' }).total).toBe(0);

  for (const format of ['spade', 'jsonl'] as const) {
    const out = join(tmp.dir, `out-${format}`);
    exportEnvironments(db, selectIds(db, {}), { format, outDir: out }, new RunStore(db));
    const db2 = lib(tmp.dir, `back-${format}.sqlite`);
    const s = await importPaths(db2, [out]);
    expect({ format, imported: s.imported, skipped: s.skipped }).toEqual({ format, imported: 1, skipped: [] });
    const e = getEnvironment(db2, search(db2, { query: 'BigEnv' }).rows[0]!.id)!;
    expect(e.source).toBe(body);
    expect(e.hint === atLimit).toBe(true);
  }

  // An import meeting a hint over the limit keeps the game and says the hint was skipped.
  const src = join(tmp.dir, 'src');
  write(src, 'game_00001_000_logical_deduction.py', gameSource(3, 'SkippedHintEnv'));
  write(src, 'game_00001_000_logical_deduction_hint.txt', hintOf(MAX_HINT_BYTES + 1));
  const s = await importPaths(db, [src]);
  expect(s.imported).toBe(1);
  expect(s.skipped.map((x) => x.reason)).toEqual([`too large (${MAX_HINT_BYTES + 1} bytes; the limit is ${MAX_HINT_BYTES})`]);
});

it('the API takes a stored hint of any size the library keeps (it refused over 20,000 characters) and refuses one over the limit', async () => {
  const tmp = tempDir('spade-limits-api-');
  const services = new Services({ dataDir: join(tmp.dir, 'data'), shell: 'in-process' });
  const api = createInProcessBackend(createDispatcher(createHandlers(services)), services.events);
  cleanups.push(async () => {
    api.close();
    await services.close();
    tmp.cleanup();
  });
  const { envId } = await api.call('editor.create', { source: gameSource(4, 'EditedEnv'), origin: 'paste' });
  const big = hintOf(500_000);
  const e = await api.call('memory.update', { id: envId, hint: big });
  expect(e.hint === big).toBe(true);
  await expect(api.call('memory.update', { id: envId, hint: hintOf(MAX_HINT_BYTES + 1) })).rejects.toMatchObject({ code: 'invalid_input' });
});
