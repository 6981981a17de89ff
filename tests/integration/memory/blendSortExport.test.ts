// The designer's reward per game in the library (issue 44): sorted by it (a sort field, the query
// language's sort:blend, the CLI's search --sort blend) and exported with it (JSONL and SPADE's
// layout's manifest.jsonl), from the numbers model runs stored. Real SQLite file, the real CLI.
import { afterEach, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { main } from '../../../core/cli/main';
import { openDatabase, type Db } from '../../../core/memory/db';
import { getEnvironment, ingest, search } from '../../../core/memory/repository';
import { sha256 } from '../../../core/memory/parse';
import { RunStore } from '../../../core/runs/runStore';
import { spadeBlendScore } from '../../../core/api/spadeBlend';
import { DomainError } from '../../../core/errors';
import { importPaths } from '../../../core/memory/importer';
import { searchSnippets } from '../../../core/memory/snippetStore';
import { tempDir } from '../../helpers/tmp';
import { gameSource } from './fixtures';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function library(): Db {
  const tmp = tempDir('spade-blend-lib-');
  const db = openDatabase(join(tmp.dir, 'workbench.sqlite'));
  cleanups.push(() => {
    db.close();
    tmp.cleanup();
  });
  return db;
}

// name -> [mean unhinted reward, regret, share of wins] as a model run stored them (null: not measured).
const MEASURED: Record<string, [number, number | null, number] | null> = {
  // Highest win rate and highest regret, but off the plateau: blend 0.4.
  Puzzle1Env: [1.0, 0.9, 1.0],
  // In the plateau, half the regret scale: 0.6 + 0.2.
  Puzzle2Env: [0.5, 0.075, 1.0],
  // Left ramp: 0.6 x 0.5 + 0.4 x 0.2 / 0.15 -> clip 1.
  Puzzle3Env: [0.275, 0.2, 0.5],
  // Unhinted mean known, regret not measured (its hinted arm failed): no blend.
  Puzzle4Env: [0.5, null, 0.5],
  // Never played by a model: no measurement at all.
  Puzzle5Env: null,
  // In the plateau, no regret: 0.6.
  Puzzle6Env: [0.45, 0.0, 0.5],
};
const expected = (n: string) => {
  const m = MEASURED[n];
  return m && m[1] !== null ? spadeBlendScore({ meanReward: m[0], regret: m[1] }).blend : null;
};

function fill(db: Db, model = 'agent-a', only?: string[]): Map<string, number> {
  const ids = new Map<string, number>();
  const runs = new RunStore(db);
  const names = Object.keys(MEASURED);
  names.forEach((name, i) => {
    const source = gameSource(i + 1);
    if (!getEnvironment(db, i + 1)) ingest(db, { source, path: `g${i + 1}.py`, skill: 'Logic' });
    ids.set(name, i + 1);
  });
  runs.start({ id: `run-${model}`, model, endpoint: 'http://x', config: { endpoint: {}, sampling: { temperature: 1, topP: 1, topK: null, maxTokens: 64, thinking: null } }, hintSource: 'stored', seeds: 2, seedStart: 0, arms: ['hint', 'nohint'], maxTurns: 5, runtime: 'cpython', selection: null, hashes: [], estimator: 'paired' });
  names.forEach((name, i) => {
    const m = MEASURED[name];
    if (!m || (only && !only.includes(name))) return;
    runs.putEnv({ runId: `run-${model}`, envHash: sha256(gameSource(i + 1)), envName: name, model, rHint: m[1] === null ? null : m[0] + m[1], rNoHint: m[0], regret: m[1], winRate: m[2], hintFailed: false, okHint: m[1] === null ? 0 : 2, okNoHint: 2, failed: m[1] === null ? 2 : 0, seeds: [0, 1], estimator: 'paired' });
  });
  return ids;
}

const byBlend = (dir: 'asc' | 'desc') => {
  const known = Object.keys(MEASURED).filter((n) => expected(n) !== null);
  known.sort((a, b) => (dir === 'desc' ? expected(b)! - expected(a)! : expected(a)! - expected(b)!));
  return known;
};

it('sorts the library by the blend of the measured numbers, unmeasured last; the query language and the CLI say sort:blend too', async () => {
  const db = library();
  fill(db);
  const names = (r: ReturnType<typeof search>) => r.rows.map((x) => x.name);
  const desc = search(db, { sort: { field: 'blend', dir: 'desc' }, limit: 50 });
  // The four with a blend in order, then the two without one (newest first among them), never as 0.
  expect(names(desc).slice(0, 4)).toEqual(byBlend('desc'));
  expect(names(desc).slice(4).sort()).toEqual(['Puzzle4Env', 'Puzzle5Env']);
  const asc = search(db, { sort: { field: 'blend', dir: 'asc' }, limit: 50 });
  expect(names(asc).slice(0, 4)).toEqual(byBlend('asc'));
  for (const row of desc.rows) {
    const want = expected(row.name);
    if (want === null) expect(row.measured?.blend ?? null, row.name).toBeNull();
    else expect(row.measured!.blend!.blend, row.name).toBe(want);
  }
  // Puzzle4: measured, but not its regret: the summary says measured, the blend says not measured.
  const p4 = desc.rows.find((r) => r.name === 'Puzzle4Env')!;
  expect(p4.measured).toMatchObject({ rNoHint: 0.5, regret: null, blend: null });
  expect(desc.rows.find((r) => r.name === 'Puzzle2Env')!.measured!.blend).toMatchObject({ plateau_term: 0.6, mean_reward: 0.5, masked: false, estimator: 'paired' });

  // The query language: sort:blend orders a search the same way, with words (FTS) or without.
  expect(names(search(db, { query: 'sort:blend', limit: 50 }))).toEqual(names(desc));
  expect(names(search(db, { query: 'sort:blend:asc', limit: 50 })).slice(0, 4)).toEqual(byBlend('asc'));
  expect(names(search(db, { query: 'hidden sort:blend', limit: 50 }))).toEqual(names(desc));
  expect(names(search(db, { query: 'skill:Logic sort:blend', limit: 50 }))).toEqual(names(desc));
  // A sort chosen besides the query (a column header) wins over the query's.
  expect(names(search(db, { query: 'sort:blend', sort: { field: 'name', dir: 'asc' }, limit: 50 }))).toEqual(Object.keys(MEASURED));
  expect(() => search(db, { query: 'sort:blender' })).toThrow(DomainError);
  // The library's snippets look for the query's words, not an operator's value: every game says "hidden",
  // and tag:hidden lit it up in each of them (sort:blend lit up `sort` in the seed pack's code).
  const all = desc.rows.map((r) => r.id);
  expect(searchSnippets(db, 'sort:blend', all)).toEqual([]);
  expect(searchSnippets(db, 'tag:hidden', all)).toEqual([]);
  expect(searchSnippets(db, 'hidden sort:blend', all).map((x) => x.text.slice(x.start, x.end).toLowerCase())).toEqual(all.map(() => 'hidden'));
  expect(searchSnippets(db, 'sort:blender', all)).toEqual([]);

  // The CLI: search --sort blend and search "sort:blend" print the rows in that order, with spade_blend.
  let out = '';
  const io = { out: (t: string) => void (out += `${t}\n`), err: (t: string) => void (out += `${t}\n`) };
  for (const argv of [['search', '--sort', 'blend', '--json'], ['search', 'sort:blend', '--json']]) {
    out = '';
    expect(await main([...argv, '--data-dir', dirname(db.name)], io)).toBe(0);
    const rows = (JSON.parse(out) as { rows: { name: string; spade_blend: { blend: number } | null }[] }).rows;
    expect(rows.map((r) => r.name)).toEqual(names(desc));
    expect(rows.map((r) => r.spade_blend?.blend ?? null)).toEqual(names(desc).map(expected));
  }
  out = '';
  expect(await main(['search', '--sort', 'blend', '--data-dir', dirname(db.name)], io)).toBe(0);
  expect(out).toMatch(/Puzzle2Env .* blend 0\.80/);
  expect(out).toMatch(/Puzzle4Env .*measured \(agent-a\) win 0\.50 regret - blend not measured/);
});

it("sorts and shows the chosen model's blend, and exports each game's blend with its model and run (null where not measured)", async () => {
  const db = library();
  fill(db, 'agent-a');
  // A second model measured only Puzzle5 (the one agent-a never played) and Puzzle1.
  fill(db, 'agent-b', ['Puzzle1Env']);
  const b = search(db, { sort: { field: 'blend', dir: 'desc' }, filters: { measuredBy: 'agent-a' }, limit: 50 });
  expect(b.rows.slice(0, 4).map((r) => r.name)).toEqual(byBlend('desc'));

  const dir = dirname(db.name);
  let out = '';
  const io = { out: (t: string) => void (out += `${t}\n`), err: (t: string) => void (out += `${t}\n`) };
  const jsonl = join(dir, 'jsonl');
  expect(await main(['export', '--all', '--format', 'jsonl', '--model', 'agent-a', jsonl, '--data-dir', dir], io)).toBe(0);
  const lines = readFileSync(join(jsonl, 'environments.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown> & { name: string; spade_blend: Record<string, unknown> | null });
  expect(lines).toHaveLength(6);
  for (const l of lines) {
    const want = expected(l.name);
    if (want === null) expect(l.spade_blend, l.name).toBeNull();
    else expect(l.spade_blend, l.name).toMatchObject({ blend: want, measured_by: 'agent-a', run_id: 'run-agent-a', params: { plateauLo: 0.4, plateauHi: 0.6, plateauRamp: 0.25 } });
  }
  expect(lines.find((l) => l.name === 'Puzzle2Env')!.spade_blend).toMatchObject({ plateau_term: 0.6, regret_term: 0.4 * (0.075 / 0.15), mean_reward: 0.5, regret: 0.075, masked: false });

  // SPADE's layout: manifest.jsonl (ours) carries it; env_memory.json keeps SPADE's own fields only.
  const spade = join(dir, 'spade');
  out = '';
  expect(await main(['export', '--all', '--model', 'agent-b', spade, '--data-dir', dir], io)).toBe(0);
  const manifest = readFileSync(join(spade, 'manifest.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { file: string; spade_blend: { blend: number; measured_by: string } | null });
  const p1 = manifest.find((m) => m.spade_blend !== null)!;
  expect(manifest.filter((m) => m.spade_blend !== null)).toHaveLength(1);
  expect(p1.spade_blend).toMatchObject({ blend: expected('Puzzle1Env'), measured_by: 'agent-b' });
  expect(readFileSync(join(spade, 'env_memory.json'), 'utf8')).not.toContain('spade_blend');

  // Reading the export back keeps no stale copy: the blend is derived, not stored as metadata.
  const db2 = library();
  expect((await importPaths(db2, [join(jsonl, 'environments.jsonl')])).imported).toBe(6);
  const again = getEnvironment(db2, 2)!;
  expect(again.meta).not.toHaveProperty('spade_blend');
  expect(again.rNoHint).toBeNull();
});

it('names the estimator of the regret it used, as model_run_envs says (migration 19)', () => {
  const db = library();
  fill(db);
  db.prepare("UPDATE model_run_envs SET estimator = 'spade' WHERE env_name = 'Puzzle2Env'").run();
  const rows = search(db, { sort: { field: 'blend', dir: 'desc' }, limit: 50 }).rows;
  expect(rows.find((r) => r.name === 'Puzzle2Env')!.measured!.blend).toMatchObject({ estimator: 'spade', blend: expected('Puzzle2Env') });
  expect(rows.find((r) => r.name === 'Puzzle1Env')!.measured!.blend!.estimator).toBe('paired');
  expect(rows.find((r) => r.name === 'Puzzle4Env')!.measured!.blend).toBeNull();
});
