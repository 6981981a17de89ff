import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../../core/memory/db';
import { importPaths } from '../../../core/memory/importer';
import { exportEnvironments } from '../../../core/memory/exporter';
import {
  addVersion,
  facets,
  getEnvironment,
  getVersion,
  listVersions,
  matchingIds,
  search,
  selectIds,
  setSeed,
  tagEnvironments,
  updateEnvironment,
} from '../../../core/memory/repository';
import { ApiError } from '../../../core/api';
import { tempDir } from '../../helpers/tmp';
import { gameSource, toolSource, write } from './fixtures';

let tmp: ReturnType<typeof tempDir>;
let db: Db;
beforeEach(async () => {
  tmp = tempDir('spade-mem-rt-');
  db = openDatabase(join(tmp.dir, 'a.sqlite'));
  const src = join(tmp.dir, 'src');
  write(src, 'games/game_00003_000_logical_deduction.py', gameSource(1, 'KnightsEnv', 'knights and knaves'));
  write(src, 'games/game_00003_000_logical_deduction_hint.txt', 'Assume the first speaker lies.');
  write(src, 'games/game_00003_001_spatial_reasoning.py', gameSource(2, 'MazeNavigatorEnv', 'a maze'));
  write(src, 'games/game_00003_002_optimization.py', gameSource(3, 'KnapsackEnv', 'pack items'));
  write(src, 'tools/a.py', toolSource(4, 'WarehouseEnv'));
  write(src, 'tools/manifest.json', JSON.stringify([{ file: 'a.py', skill: 'Data Retrieval', source_run: 'r1', recipe: 'grpo' }]));
  write(
    src,
    'env_memory.json',
    JSON.stringify([{ game_file: 'game_00003_000_logical_deduction.py', skill: 'Logical Deduction', actor_win_rate: 0.5, regret: 0.3, rollout_id: 3, metadata: { r_hint: 0.8, r_no_hint: 0.5 } }]),
  );
  await importPaths(db, [src]);
});
afterEach(() => {
  db.close();
  tmp.cleanup();
});

const hashes = (d: Db) => (d.prepare('SELECT hash FROM versions ORDER BY hash').all() as { hash: string }[]).map((r) => r.hash);
const idOf = (name: string) => search(db, { limit: 100 }).rows.find((r) => r.name === name)!.id;

describe('export and re-import', () => {
  it("round-trips through SPADE's layout: same versions, hints, stats, seeds and tags; checksums verify with sha256sum", async () => {
    const all = selectIds(db, {});
    setSeed(db, [idOf('KnightsEnv'), idOf('WarehouseEnv')], true);
    tagEnvironments(db, [idOf('KnightsEnv')], ['curated'], []);
    const out = join(tmp.dir, 'export');
    const r = exportEnvironments(db, all, { format: 'spade', outDir: out });
    expect(r.count).toBe(4);
    expect(r.files).toContain('games/game_00003_000_logical_deduction.py');
    expect(r.files).toContain('games/game_00003_000_logical_deduction_hint.txt');
    expect(r.files).toContain('env_memory.json');
    expect(r.files).toContain('tool_use/manifest.json');
    expect(existsSync(join(out, 'checksums.sha256'))).toBe(true);
    execFileSync('sha256sum', ['-c', '--quiet', 'checksums.sha256'], { cwd: out });
    const memory = JSON.parse(readFileSync(join(out, 'env_memory.json'), 'utf8')) as { game_file: string; regret: number | null }[];
    expect(memory.find((m) => m.game_file === 'game_00003_000_logical_deduction.py')?.regret).toBe(0.3);

    const db2 = openDatabase(join(tmp.dir, 'b.sqlite'));
    try {
      const s = await importPaths(db2, [out]);
      expect(s.skipped).toEqual([]);
      expect(s.flagged).toEqual([]);
      expect(s.imported).toBe(4);
      expect(hashes(db2)).toEqual(hashes(db));
      const k2 = search(db2, { query: 'Knights' }).rows[0]!;
      const k = getEnvironment(db2, k2.id)!;
      expect(k.hint).toBe('Assume the first speaker lies.');
      expect(k.regret).toBe(0.3);
      expect(k.rHint).toBe(0.8);
      expect(k.seed).toBe(true);
      expect(k.tags).toEqual(['curated']);
      expect(search(db2, { filters: { kind: 'tool-use' } }).rows[0]!.seed).toBe(true);
      const again = await importPaths(db2, [out]);
      expect(again.imported).toBe(0);
    } finally {
      db2.close();
    }
  });

  it('round-trips through JSONL', async () => {
    const out = join(tmp.dir, 'jsonl');
    exportEnvironments(db, selectIds(db, {}), { format: 'jsonl', outDir: out });
    const db2 = openDatabase(join(tmp.dir, 'c.sqlite'));
    try {
      const s = await importPaths(db2, [join(out, 'environments.jsonl')]);
      expect(s.imported).toBe(4);
      expect(hashes(db2)).toEqual(hashes(db));
      const w = search(db2, { query: 'warehouse' }).rows[0]!;
      expect(w.kind).toBe('tool-use');
      expect(getEnvironment(db2, w.id)!.meta.recipe).toBe('grpo');
    } finally {
      db2.close();
    }
  });
});

describe('search', () => {
  it('finds by class-name part, code, hint and notes, as a prefix while typing', () => {
    expect(search(db, { query: 'navigator' }).rows.map((r) => r.name)).toEqual(['MazeNavigatorEnv']);
    expect(search(db, { query: 'knap' }).rows.map((r) => r.name)).toEqual(['KnapsackEnv']);
    expect(search(db, { query: 'first speaker' }).rows.map((r) => r.name)).toEqual(['KnightsEnv']);
    expect(search(db, { query: 'tool_lookup' }).rows.map((r) => r.name)).toEqual(['WarehouseEnv']);
    updateEnvironment(db, idOf('KnapsackEnv'), { notes: 'greedy agent exploits this' });
    expect(search(db, { query: 'greedy' }).rows.map((r) => r.name)).toEqual(['KnapsackEnv']);
    expect(search(db, { query: 'zzzznothing' }).total).toBe(0);
    expect(search(db, { query: '"unbalanced ( quote' }).total).toBe(0);
  });

  it('filters, sorts and pages', () => {
    expect(search(db, { filters: { kind: 'game' } }).total).toBe(3);
    expect(search(db, { filters: { skills: ['Optimization', 'Spatial Reasoning'] } }).total).toBe(2);
    tagEnvironments(db, [idOf('KnapsackEnv'), idOf('KnightsEnv')], ['hard', 'reviewed'], []);
    tagEnvironments(db, [idOf('KnightsEnv')], [], ['hard']);
    expect(search(db, { filters: { tags: ['hard'] } }).rows.map((r) => r.name)).toEqual(['KnapsackEnv']);
    expect(search(db, { filters: { tags: ['reviewed'] } }).total).toBe(2);
    const byName = search(db, { sort: { field: 'name', dir: 'asc' } }).rows.map((r) => r.name);
    expect(byName).toEqual(['KnapsackEnv', 'KnightsEnv', 'MazeNavigatorEnv', 'WarehouseEnv']);
    const page = search(db, { sort: { field: 'name', dir: 'asc' }, offset: 1, limit: 2 });
    expect(page.total).toBe(4);
    expect(page.rows.map((r) => r.name)).toEqual(['KnightsEnv', 'MazeNavigatorEnv']);
    expect(search(db, { sort: { field: 'regret', dir: 'desc' } }).rows[0]!.name).toBe('KnightsEnv');
    expect(search(db, { filters: { source: join(tmp.dir, 'src', 'tools') } }).total).toBe(1);
    const f = facets(db, '', { kind: 'game' });
    expect(f.kinds).toEqual([
      { value: 'game', count: 3 },
      { value: 'tool-use', count: 1 },
    ]);
    expect(f.skills.map((s) => s.value).sort()).toEqual(['Logical Deduction', 'Optimization', 'Spatial Reasoning']);
    expect(f.tags).toEqual([
      { value: 'reviewed', count: 2 },
      { value: 'hard', count: 1 },
    ]);
  });

  it('lists every id a search matches for "select all matching", bounded', () => {
    const all = matchingIds(db, {});
    expect(all).toEqual({ ids: [...all.ids].sort((a, b) => b - a), truncated: false });
    expect(all.ids).toHaveLength(search(db, {}).total);
    const games = matchingIds(db, { filters: { kind: 'game' } }).ids;
    expect(games.sort()).toEqual(search(db, { filters: { kind: 'game' }, limit: 1000 }).rows.map((r) => r.id).sort());
    expect(matchingIds(db, { query: 'knap' }).ids).toEqual([idOf('KnapsackEnv')]);
    expect(matchingIds(db, { query: 'knap', filters: { kind: 'tool-use' } }).ids).toEqual([]);
    expect(matchingIds(db, {}, 2)).toEqual({ ids: all.ids.slice(0, 2), truncated: true });
  });
});

describe('versions', () => {
  it('adds versions with a parent and never overwrites; hints are versioned', () => {
    const id = idOf('KnightsEnv');
    const first = getEnvironment(db, id)!;
    const edited = `${first.source}\n# tweak\n`;
    const r = addVersion(db, id, edited, first.hash, 'tweak');
    expect(r.created).toBe(true);
    const vs = listVersions(db, id);
    expect(vs.map((v) => v.parentHash)).toEqual([null, first.hash]);
    expect(getVersion(db, first.hash)!.source).toBe(first.source);
    expect(getEnvironment(db, id)!.hash).toBe(r.hash);
    expect(addVersion(db, id, first.source, r.hash).created).toBe(false);
    expect(getEnvironment(db, id)!.hash).toBe(first.hash);
    expect(() => addVersion(db, id, getEnvironment(db, idOf('KnapsackEnv'))!.source, first.hash)).toThrow(ApiError);
    updateEnvironment(db, id, { hint: 'A better hint.' });
    const d = getEnvironment(db, id)!;
    expect(d.hint).toBe('A better hint.');
    expect(d.hints.map((h) => h.text)).toEqual(['Assume the first speaker lies.', 'A better hint.']);
    expect(search(db, { query: 'better hint' }).total).toBe(1);
  });
});
