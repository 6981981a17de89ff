import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../../core/memory/db';
import { importPaths } from '../../../core/memory/importer';
import { exportEnvironments } from '../../../core/memory/exporter';
import { RunStore } from '../../../core/runs/runStore';
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
import { DomainError } from '../../../core/errors';
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
    const r = exportEnvironments(db, all, { format: 'spade', outDir: out }, new RunStore(db));
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
    exportEnvironments(db, selectIds(db, {}), { format: 'jsonl', outDir: out }, new RunStore(db));
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

describe("SPADE's file formats survive export and re-import", () => {
  const reimport = async (out: string) => {
    const db2 = openDatabase(join(tmp.dir, `re-${Math.random().toString(36).slice(2)}.sqlite`));
    const s = await importPaths(db2, [out]);
    return { db2, s };
  };

  it('env_memory.json never holds null stats: unknown regret is 0.0 (and marked), a game never played gets no record', async () => {
    // Knights has win rate 0.5 and regret 0.3; give Maze a win rate but no regret; Knapsack has neither.
    const src = join(tmp.dir, 'mem2');
    // Away from the run's folder, a record is matched by its code (a file name repeats in every SPADE run).
    write(src, 'env_memory.json', JSON.stringify([{ game_file: 'game_00003_001_spatial_reasoning.py', skill: 'Spatial Reasoning', code_snippet: gameSource(2, 'MazeNavigatorEnv', 'a maze'), actor_win_rate: 0.25, rollout_id: 3, metadata: {} }]));
    await importPaths(db, [src]);
    expect(getEnvironment(db, idOf('MazeNavigatorEnv'))!.regret).toBeNull();
    const out = join(tmp.dir, 'export-mem');
    exportEnvironments(db, selectIds(db, {}), { format: 'spade', outDir: out }, new RunStore(db));
    const text = readFileSync(join(out, 'env_memory.json'), 'utf8');
    const memory = JSON.parse(text) as Record<string, unknown>[];
    // What SPADE's samplers do with every record: compare the win rate, sort by regret.
    for (const m of memory) {
      expect(typeof m.actor_win_rate).toBe('number');
      expect(typeof m.regret).toBe('number');
      expect(typeof m.rollout_id).toBe('number');
      expect(typeof m.skill).toBe('string');
      expect(typeof m.code_snippet).toBe('string');
      expect(m.metadata && typeof m.metadata === 'object').toBe(true);
    }
    expect(text).not.toMatch(/:\s*null/);
    expect(memory.map((m) => m.game_file).sort()).toEqual(['game_00003_000_logical_deduction.py', 'game_00003_001_spatial_reasoning.py']);
    const maze = memory.find((m) => m.game_file === 'game_00003_001_spatial_reasoning.py')!;
    expect(maze).toMatchObject({ actor_win_rate: 0.25, regret: 0, metadata: { workbench_unknown: ['regret'] } });
    const { db2 } = await reimport(out);
    try {
      const m2 = getEnvironment(db2, search(db2, { query: 'MazeNavigator' }).rows[0]!.id)!;
      expect(m2.winRate).toBe(0.25);
      expect(m2.regret).toBeNull();
      expect(getEnvironment(db2, search(db2, { query: 'Knights' }).rows[0]!.id)!.regret).toBe(0.3);
      expect(getEnvironment(db2, search(db2, { query: 'Knapsack' }).rows[0]!.id)!.winRate).toBeNull();
    } finally {
      db2.close();
    }
  });

  it("export --all never writes rejected games into games/: they go where SPADE puts them, and come back rejected", async () => {
    const src = join(tmp.dir, 'rej');
    write(src, 'spade_games_rejected/reject_00005_002_multi-step_workflows_env_validator.py', gameSource(7, 'TooEasyEnv'));
    write(src, 'spade_games_rejected/reject_00005_002_multi-step_workflows_env_validator.reason.txt', 'Too easy: answer in the prompt.\n');
    write(src, 'games/rejected/rej_r4_g1_a2_Logical_Deduction.py', `# REJECTED (attempt 2): Game step() failed on action 1 '\\boxed{1}': boom\n\n${gameSource(8, 'BoomEnv')}`);
    await importPaths(db, [src]);
    db.prepare("UPDATE environments SET rejected = 1, rejection_stage = 'env_validator' WHERE name = 'WarehouseEnv'").run();
    const out = join(tmp.dir, 'export-rej');
    exportEnvironments(db, selectIds(db, {}), { format: 'spade', outDir: out }, new RunStore(db));
    const games = readdirSync(join(out, 'games'));
    expect(games.filter((f) => f.endsWith('.py')).sort()).toEqual(['game_00003_000_logical_deduction.py', 'game_00003_001_spatial_reasoning.py', 'game_00003_002_optimization.py']);
    const rejected = readdirSync(join(out, 'spade_games_rejected')).sort();
    expect(rejected).toContain('reject_00005_002_multi-step_workflows_env_validator.py');
    expect(readFileSync(join(out, 'spade_games_rejected', 'reject_00005_002_multi-step_workflows_env_validator.reason.txt'), 'utf8')).toBe('Too easy: answer in the prompt.\n');
    expect(rejected).toContain('rej_r4_g1_a2_Logical_Deduction.py');
    // A rejected tool-use environment is not listed in the tool-use release either.
    expect(rejected).toContain('reject_00000_000_data_retrieval_env_validator.py');
    expect(existsSync(join(out, 'tool_use', 'manifest.json'))).toBe(false);
    const memory = JSON.parse(readFileSync(join(out, 'env_memory.json'), 'utf8')) as { game_file: string }[];
    expect(memory.some((m) => /reject|rej_/.test(m.game_file))).toBe(false);
    execFileSync('sha256sum', ['-c', '--quiet', 'checksums.sha256'], { cwd: out });

    const { db2, s } = await reimport(out);
    try {
      expect(s.skipped).toEqual([]);
      expect(hashes(db2)).toEqual(hashes(db));
      const easy = getEnvironment(db2, search(db2, { query: 'TooEasyEnv' }).rows[0]!.id)!;
      expect(easy).toMatchObject({ rejected: true, rejectionStage: 'env_validator', rejectionReason: 'Too easy: answer in the prompt.\n', skill: 'Multi-Step Workflows', rolloutStep: 5 });
      const boom = getEnvironment(db2, search(db2, { query: 'BoomEnv' }).rows[0]!.id)!;
      expect(boom).toMatchObject({ rejected: true, rejectionReason: "Game step() failed on action 1 '\\boxed{1}': boom", skill: 'Logical Deduction', rolloutStep: 4 });
      expect(boom.meta.rejection_attempt).toBe(2);
    } finally {
      db2.close();
    }
  });

  it("reads the rejection reason and attempt from SPADE's '# REJECTED (attempt N)' first line", async () => {
    const src = join(tmp.dir, 'rej2');
    write(src, 'games/rejected/rej_r9_g0_a1_Multi-Step_Workflows.py', `# REJECTED (attempt 1): Failed to execute game code: name 'foo' is not defined\n\nfoo()\n`);
    await importPaths(db, [src]);
    const row = search(db, { filters: { rejected: true } }).rows[0]!;
    const d = getEnvironment(db, row.id)!;
    expect(d).toMatchObject({ rejected: true, rejectionReason: "Failed to execute game code: name 'foo' is not defined", skill: 'Multi-Step Workflows', rolloutStep: 9 });
    expect(d.meta.rejection_attempt).toBe(1);
  });

  it("keeps SPADE's '-' in skill slugs: multi-step_workflows is read and written as SPADE names it", async () => {
    const src = join(tmp.dir, 'slug');
    write(src, 'games/game_00006_000_multi-step_workflows.py', gameSource(9, 'PipelineEnv'));
    await importPaths(db, [src]);
    const p = getEnvironment(db, idOf('PipelineEnv'))!;
    expect(p.skill).toBe('Multi-Step Workflows');
    updateEnvironment(db, p.id, { notes: 'renamed on export' });
    const out = join(tmp.dir, 'export-slug');
    // A game without its original file name gets one built from SPADE's slug.
    db.prepare('UPDATE environments SET file_stem = NULL WHERE id = ?').run(p.id);
    const r = exportEnvironments(db, [p.id], { format: 'spade', outDir: out }, new RunStore(db));
    expect(r.files).toContain('games/game_00006_000_multi-step_workflows.py');
  });

  it('keeps the hint verbatim, whitespace included, on import and on export', async () => {
    const hint = '  Think about parity first.\n\n  Then the corners.  \n';
    const src = join(tmp.dir, 'hint');
    write(src, 'games/game_00008_000_optimization.py', gameSource(11, 'ParityEnv'));
    write(src, 'games/game_00008_000_optimization_hint.txt', hint);
    await importPaths(db, [src]);
    const id = idOf('ParityEnv');
    expect(getEnvironment(db, id)!.hint).toBe(hint);
    const out = join(tmp.dir, 'export-hint');
    exportEnvironments(db, [id], { format: 'spade', outDir: out }, new RunStore(db));
    expect(readFileSync(join(out, 'games', 'game_00008_000_optimization_hint.txt'), 'utf8')).toBe(hint);
    const { db2 } = await reimport(out);
    try {
      expect(getEnvironment(db2, search(db2, { query: 'ParityEnv' }).rows[0]!.id)!.hint).toBe(hint);
    } finally {
      db2.close();
    }
  });
});

describe('re-importing an unchanged export', () => {
  const summaryOf = (s: Awaited<ReturnType<typeof importPaths>>) => ({ imported: s.imported, updated: s.updated, statsAttached: s.statsAttached, skipped: s.skipped, flagged: s.flagged });
  const nothing = { imported: 0, updated: 0, statsAttached: 0, skipped: [], flagged: [] };
  const state = (d: Db) =>
    JSON.stringify({
      envs: d.prepare('SELECT * FROM environments ORDER BY id').all(),
      hints: d.prepare('SELECT env_id, text FROM hints ORDER BY id').all(),
      tags: d.prepare('SELECT env_id, tag FROM tags ORDER BY env_id, tag').all(),
      versions: hashes(d),
    });

  it('reports 0 new, 0 updated and changes nothing, into the library it came from and into a fresh one (seed pack, stats, rejected, tool use, no rollout)', async () => {
    await importPaths(db, [join(process.cwd(), 'resources', 'seed-pack')]);
    const src = join(tmp.dir, 'more');
    write(src, 'spade_games_rejected/reject_00005_002_multi-step_workflows_env_validator.py', gameSource(7, 'TooEasyEnv'));
    write(src, 'spade_games_rejected/reject_00005_002_multi-step_workflows_env_validator.reason.txt', 'Too easy: answer in the prompt.\n');
    write(src, 'loose/parity.py', gameSource(11, 'ParityEnv'));
    write(src, 'loose/parity_hint.txt', `  ${'Think about parity first. '.repeat(12)}\n`);
    await importPaths(db, [src]);
    const all = selectIds(db, {});
    setSeed(db, [idOf('ParityEnv'), idOf('WarehouseEnv')], true);
    tagEnvironments(db, [idOf('KnightsEnv'), idOf('ParityEnv')], ['curated'], []);
    updateEnvironment(db, idOf('KnapsackEnv'), { rating: 4, notes: 'a note' });
    db.prepare('UPDATE environments SET win_rate = 0.25 WHERE name = ?').run('ParityEnv');
    const out = join(tmp.dir, 'export-again');
    exportEnvironments(db, all, { format: 'spade', outDir: out }, new RunStore(db));

    const before = state(db);
    const back = await importPaths(db, [out]);
    expect(summaryOf(back)).toEqual(nothing);
    expect(back.unchanged).toBe(all.length);
    expect(state(db)).toBe(before);

    const db2 = openDatabase(join(tmp.dir, 'fresh.sqlite'));
    try {
      const first = await importPaths(db2, [out]);
      expect(first.imported).toBe(all.length);
      const fresh = state(db2);
      const second = await importPaths(db2, [out]);
      expect(summaryOf(second)).toEqual(nothing);
      expect(state(db2)).toBe(fresh);
    } finally {
      db2.close();
    }
  });

  it('reports 0 new, 0 updated for a JSONL export read back into its library', async () => {
    updateEnvironment(db, idOf('KnapsackEnv'), { rating: 2, notes: 'kept' });
    const out = join(tmp.dir, 'jsonl-again');
    exportEnvironments(db, selectIds(db, {}), { format: 'jsonl', outDir: out }, new RunStore(db));
    const before = state(db);
    const back = await importPaths(db, [out]);
    expect(summaryOf(back)).toEqual(nothing);
    expect(state(db)).toBe(before);
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
    expect(() => addVersion(db, id, getEnvironment(db, idOf('KnapsackEnv'))!.source, first.hash)).toThrow(DomainError);
    updateEnvironment(db, id, { hint: 'A better hint.' });
    const d = getEnvironment(db, id)!;
    expect(d.hint).toBe('A better hint.');
    expect(d.hints.map((h) => h.text)).toEqual(['Assume the first speaker lies.', 'A better hint.']);
    expect(search(db, { query: 'better hint' }).total).toBe(1);
  });
});
