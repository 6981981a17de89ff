import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeSync, mkdirSync, openSync, readFileSync, symlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../../core/memory/db';
import { importPaths, NOT_FOLLOWED } from '../../../core/memory/importer';
import { SKIPPED_EXAMPLES } from '../../../core/api/calls/memory';
import { getEnvironment, search } from '../../../core/memory/repository';
import { sha256 } from '../../../core/memory/parse';
import { tempDir } from '../../helpers/tmp';
import { gameSource, toolSource, write } from './fixtures';

let tmp: ReturnType<typeof tempDir>;
let db: Db;
beforeEach(() => {
  tmp = tempDir('spade-mem-');
  db = openDatabase(join(tmp.dir, 'data', 'workbench.sqlite'));
});
afterEach(() => {
  db.close();
  tmp.cleanup();
});

const byName = (name: string) => {
  const r = search(db, { query: '', filters: {}, limit: 1000 }).rows.find((x) => x.name === name);
  if (!r) throw new Error(`${name} not imported`);
  return getEnvironment(db, r.id)!;
};
const reasonFor = (s: { skipped: { path: string; reason: string }[] }, suffix: string) => s.skipped.find((k) => k.path.endsWith(suffix))?.reason;

describe('importers', () => {
  it('imports a games folder and the rollout cache with hints, specs and steps, and a re-import adds nothing', async () => {
    const root = join(tmp.dir, 'out');
    write(root, 'games/game_00012_003_logical_deduction.py', gameSource(1, 'DeduceEnv'));
    write(root, 'games/game_00012_003_logical_deduction_hint.txt', 'Halve the range each time.\n');
    write(root, 'games/game_00012_003_logical_deduction.json', JSON.stringify({ difficulty: 'hard', designer_prompt: 'x' }));
    write(root, 'spade_games_cache/step_00042/game_00042_001_optimization.py', gameSource(2, 'OptEnv'));
    write(root, 'spade_games_cache/step_00042/game_00042_001_optimization_hint.txt', 'Start from the middle.');
    const events: string[] = [];
    const s = await importPaths(db, [root], { onProgress: (p) => events.push(p.phase) });
    expect(s.imported).toBe(2);
    expect(s.skipped).toEqual([]);
    expect(events[0]).toBe('scanning');
    expect(events.at(-1)).toBe('done');

    const d = byName('DeduceEnv');
    expect(d.skill).toBe('Logical Deduction');
    expect(d.rolloutStep).toBe(12);
    expect(d.hint).toBe('Halve the range each time.\n'); // verbatim: SPADE shows the hint whitespace included
    expect(d.meta.spec).toEqual({ difficulty: 'hard', designer_prompt: 'x' });
    expect(d.hash).toBe(sha256(gameSource(1, 'DeduceEnv')));
    expect(d.kind).toBe('game');
    const o = byName('OptEnv');
    expect(o.rolloutStep).toBe(42);
    expect(o.skill).toBe('Optimization');

    const again = await importPaths(db, [root]);
    expect(again.imported).toBe(0);
    expect(again.unchanged).toBe(2);
    expect((db.prepare('SELECT count(*) n FROM versions').get() as { n: number }).n).toBe(2);
    expect((db.prepare('SELECT count(*) n FROM hints').get() as { n: number }).n).toBe(2);
  });

  it('imports rejected games with stage and reason', async () => {
    const root = join(tmp.dir, 'run');
    write(root, 'spade_games_rejected/reject_00005_002_pattern_recognition_too_easy.py', gameSource(3, 'EasyEnv'));
    write(root, 'spade_games_rejected/reject_00005_002_pattern_recognition_too_easy.reason.txt', 'success rate 0.40 > 0.15');
    write(root, 'games/rejected/rej_r3_g1_a0_spatial_reasoning.py', 'class BrokenEnv:\n    def reset(self, seed=None)\n        pass\n');
    const s = await importPaths(db, [root]);
    expect(s.imported).toBe(2);
    const e = byName('EasyEnv');
    expect(e.rejected).toBe(true);
    expect(e.rejectionStage).toBe('too_easy');
    expect(e.rejectionReason).toBe('success rate 0.40 > 0.15');
    expect(e.skill).toBe('Pattern Recognition');
    const b = byName('BrokenEnv');
    expect(b.rejected).toBe(true);
    expect(b.rolloutStep).toBe(3);
    expect(search(db, { filters: { rejected: true } }).total).toBe(2);
    expect(search(db, { filters: { rejectionStage: 'too_easy' } }).total).toBe(1);
  });

  it('imports a static pool, verifying checksums: a mismatch is flagged, a missing file reported, the rest imported', async () => {
    const root = join(tmp.dir, 'pool');
    const files = [0, 1, 2].map((i) => write(root, `games/game_00001_00${i}_optimization.py`, gameSource(10 + i, `Pool${i}Env`)));
    const lines = [0, 1, 2, 3].map((i) => JSON.stringify({ file: `games/game_00001_00${i}_optimization.py`, skill: 'Optimization', difficulty: i }));
    write(root, 'manifest.jsonl', `${lines.join('\n')}\n`);
    write(root, 'validation_manifest.jsonl', `${JSON.stringify({ file: 'games/game_00001_000_optimization.py', valid: true })}\n`);
    write(root, 'validation_summary.json', '{"passed": 3}');
    const sums = [0, 1, 2].map((i) => `${i === 1 ? '0'.repeat(64) : sha256(gameSource(10 + i, `Pool${i}Env`))}  games/game_00001_00${i}_optimization.py`);
    write(root, 'checksums.sha256', `${sums.join('\n')}\n`);
    const s = await importPaths(db, [root]);
    expect(s.imported).toBe(3);
    expect(reasonFor(s, 'game_00001_003_optimization.py')).toMatch(/named in manifest.jsonl but missing/);
    expect(s.flagged).toEqual([expect.objectContaining({ path: files[1], flag: 'checksum_mismatch' })]);
    expect(byName('Pool1Env').flags).toEqual(['checksum_mismatch']);
    expect(byName('Pool0Env').flags).toEqual([]);
    expect(byName('Pool0Env').validation).toBe('valid');
    expect(byName('Pool2Env').meta.difficulty).toBe(2);
    expect(search(db, { filters: { flagged: true } }).total).toBe(1);
    expect(s.skipped).toHaveLength(1);
  });

  it('imports the tool-use release layout keeping its fields', async () => {
    const root = join(tmp.dir, 'tools');
    write(root, 'env_a.py', toolSource(1, 'ShopEnv'));
    write(root, 'env_b.py', toolSource(2, 'BankEnv'));
    write(
      root,
      'manifest.json',
      JSON.stringify([
        { file: 'env_a.py', skill: 'Data Retrieval', source_run: 'run-30b', model_scale: '30b', recipe: 'grpo', training_step: 120, mean_reward: null, solve_rate: null },
        { file: 'env_b.py', skill: 'API Orchestration', source_run: 'run-30b', model_scale: '30b', recipe: 'grpo', training_step: 140, mean_reward: null, solve_rate: null },
        { file: 'env_gone.py', skill: 'Tool Selection' },
      ]),
    );
    const s = await importPaths(db, [root]);
    expect(s.imported).toBe(2);
    expect(reasonFor(s, 'env_gone.py')).toMatch(/named in manifest.json .* but missing/);
    const a = byName('ShopEnv');
    expect(a.kind).toBe('tool-use');
    expect(a.skill).toBe('Data Retrieval');
    expect(a.sourceRun).toBe('run-30b');
    expect(a.rolloutStep).toBe(120);
    expect(a.meta.model_scale).toBe('30b');
    expect(a.meta.recipe).toBe('grpo');
    expect(a.meta.mean_reward).toBeNull();
    expect(search(db, { filters: { run: 'run-30b' } }).total).toBe(2);
  });

  it('attaches env_memory.json stats to the games it names and reports the ones it cannot find', async () => {
    const root = join(tmp.dir, 'cache');
    write(root, 'step_00007/game_00007_000_causal_inference.py', gameSource(20, 'CauseEnv'));
    write(
      root,
      'env_memory.json',
      JSON.stringify([
        { game_file: 'game_00007_000_causal_inference.py', skill: 'Causal Inference', code_snippet: 'x', actor_win_rate: 0.4, regret: 0.35, rollout_id: 7, metadata: { r_hint: 0.75, r_no_hint: 0.4 } },
        { game_file: 'game_00009_000_optimization.py', skill: 'Optimization', code_snippet: 'y', actor_win_rate: 0.1, regret: 0.2, rollout_id: 9, metadata: {} },
      ]),
    );
    const s = await importPaths(db, [root]);
    expect(s.imported).toBe(1);
    expect(s.statsAttached).toBe(1);
    const c = byName('CauseEnv');
    expect(c.winRate).toBe(0.4);
    expect(c.regret).toBe(0.35);
    expect(c.rHint).toBe(0.75);
    expect(c.rNoHint).toBe(0.4);
    expect(s.skipped.find((k) => k.path.includes('game_00009_000_optimization'))?.reason).toMatch(/not in the library/);
    expect(search(db, { filters: { regret: { min: 0.3, max: 0.4 } } }).total).toBe(1);
    expect(search(db, { filters: { winRate: { min: 0.5 } } }).total).toBe(0);
    const again = await importPaths(db, [root]);
    expect(again.statsAttached).toBe(0);
  });

  it('imports JSONL, one environment per line, keeping unknown keys and skipping broken lines', async () => {
    const lines = [
      JSON.stringify({ code: gameSource(30, 'LineOneEnv'), hint: 'Think about parity.', skill: 'Logical Deduction', origin: 'paper-appendix' }),
      '{"code": "class Half',
      JSON.stringify({ code: gameSource(31, 'LineTwoEnv'), name: 'LineTwoEnv', skill: 'memory_recall', tags: ['curated'] }),
      JSON.stringify({ text: 'a corpus line, no code' }),
      JSON.stringify([1, 2]),
      '',
    ];
    const file = write(tmp.dir, 'envs.jsonl', lines.join('\n'));
    const s = await importPaths(db, [file]);
    expect(s.imported).toBe(2);
    expect(reasonFor(s, 'envs.jsonl:2')).toMatch(/broken JSON/);
    expect(reasonFor(s, 'envs.jsonl:4')).toMatch(/no "code"/);
    expect(reasonFor(s, 'envs.jsonl:5')).toMatch(/not a JSON object/);
    const one = byName('LineOneEnv');
    expect(one.hint).toBe('Think about parity.');
    expect(one.meta.origin).toBe('paper-appendix');
    expect(byName('LineTwoEnv').skill).toBe('Memory Recall');
    expect(byName('LineTwoEnv').tags).toEqual(['curated']);
  });

  it('skips bad input with a reason each and goes on', async () => {
    const root = join(tmp.dir, 'bad');
    write(root, 'good/game_00001_000_optimization.py', gameSource(40, 'GoodEnv'));
    write(root, 'latin1/game_00001_001_optimization.py', Buffer.concat([Buffer.from('class Caf'), Buffer.from([0xe9]), Buffer.from('Env:\n    pass\n')]));
    write(root, 'empty/game_00001_002_optimization.py', '');
    write(root, 'big/game_00001_003_optimization.py', Buffer.alloc(20 * 1024 * 1024, 0x61));
    write(root, 'bin/game_00001_004_optimization.py', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3]));
    write(root, 'noclass/helper.py', 'def f():\n    return 1\n');
    write(root, 'notes/README.md', '# notes');
    write(root, 'notes/todo.md', 'x');
    write(root, 'orphan/game_00009_000_optimization_hint.txt', 'a hint whose game is gone');
    write(root, 'broken.jsonl', 'not json at all\n');
    mkdirSync(join(root, 'loop'));
    symlinkSync(join(root, 'loop', 'b'), join(root, 'loop', 'a'));
    symlinkSync(join(root, 'loop', 'a'), join(root, 'loop', 'b'));
    symlinkSync(root, join(root, 'loop', 'up'));
    symlinkSync(join(root, 'nowhere'), join(root, 'dangling.py'));
    const s = await importPaths(db, [root]);
    expect(s.imported).toBe(1);
    expect(reasonFor(s, 'latin1/game_00001_001_optimization.py')).toBe('not valid UTF-8');
    expect(reasonFor(s, 'empty/game_00001_002_optimization.py')).toBe('empty file');
    expect(reasonFor(s, 'big/game_00001_003_optimization.py')).toMatch(/too large \(20971520 bytes/);
    expect(reasonFor(s, 'bin/game_00001_004_optimization.py')).toMatch(/binary/);
    expect(reasonFor(s, 'noclass/helper.py')).toMatch(/no class whose name ends in Env/);
    expect(reasonFor(s, 'README.md')).toBeUndefined();
    expect(reasonFor(s, 'todo.md')).toMatch(/not an environment file \(\.md\)/);
    expect(reasonFor(s, 'game_00009_000_optimization_hint.txt')).toMatch(/hint without its game/);
    expect(reasonFor(s, 'broken.jsonl:1')).toMatch(/broken JSON/);
    expect(reasonFor(s, 'loop/a')).toBe('symlink loop');
    expect(reasonFor(s, 'loop/b')).toBe('symlink loop');
    expect(reasonFor(s, 'loop/up')).toMatch(/symlink cycle/);
    expect(reasonFor(s, 'dangling.py')).toBe('broken symlink');
    expect(s.skipped.length).toBe(12);
    expect(byName('GoodEnv').name).toBe('GoodEnv');
  });

  it('cancels between batches and keeps what was committed; a re-run finishes without duplicates', async () => {
    const root = join(tmp.dir, 'many');
    for (let i = 0; i < 60; i++) write(root, `game_00002_${String(i).padStart(3, '0')}_optimization.py`, gameSource(100 + i));
    const ctl = new AbortController();
    const s = await importPaths(db, [root], {
      batchSize: 10,
      signal: ctl.signal,
      onProgress: (p) => {
        if (p.imported >= 20) ctl.abort();
      },
    });
    expect(s.cancelled).toBe(true);
    expect(s.imported).toBe(20);
    expect(search(db, {}).total).toBe(20);
    const rest = await importPaths(db, [root], { batchSize: 10 });
    expect(rest.imported).toBe(40);
    expect(rest.unchanged).toBe(20);
    expect(search(db, {}).total).toBe(60);
  });

  it('stamps run, job and rollout step given by the caller (how jobs pull environments back)', async () => {
    const root = join(tmp.dir, 'job');
    write(root, 'x.py', gameSource(50, 'FromJobEnv'));
    await importPaths(db, [root], { runId: 'spade_games_30b_123', jobId: 'job-1', rolloutStep: 77 });
    const d = byName('FromJobEnv');
    expect(d.sourceRun).toBe('spade_games_30b_123');
    expect(d.jobId).toBe('job-1');
    expect(d.rolloutStep).toBe(77);
    expect(search(db, { filters: { jobId: 'job-1' } }).total).toBe(1);
  });

  // As root, permission bits do not stop reads, so no unreadable file can be made here; the CLI
  // test covers this case by running the import as the unprivileged 'nobody' user instead.
  it.skipIf(process.getuid?.() === 0)('reports an unreadable file (non-root only)', async () => {
    const { chmodSync } = await import('node:fs');
    const f = write(tmp.dir, 'locked/game_00001_000_optimization.py', gameSource(60));
    chmodSync(f, 0);
    const s = await importPaths(db, [join(tmp.dir, 'locked')]);
    expect(reasonFor(s, 'game_00001_000_optimization.py')).toMatch(/permission denied/);
  });

  it('stays inside the chosen folder: manifest entries and symlinks leading out are listed as not followed', async () => {
    const outside = join(tmp.dir, 'outside');
    write(outside, 'SecretEnv.py', gameSource(40, 'SecretEnv'));
    write(outside, 'secret.txt', 'a private note');
    write(outside, 'dir/LinkedEnv.py', gameSource(41, 'LinkedEnv'));
    const root = join(tmp.dir, 'pool');
    write(root, 'games/game_00001_000_optimization.py', gameSource(42, 'InsideEnv'));
    // Relative climbs as deep as a hostile pool would write them, to a file that exists.
    const climb = `${'../'.repeat(join(tmp.dir, 'pool').split('/').length)}${outside.slice(1)}/SecretEnv.py`;
    write(root, 'manifest.jsonl', `${JSON.stringify({ file: 'games/game_00001_000_optimization.py' })}\n${JSON.stringify({ file: climb })}\n${JSON.stringify({ file: '../../../../etc/passwd' })}\n`);
    symlinkSync(join(outside, 'dir'), join(root, 'linked'));
    write(root, 'other/game_00001_001_optimization.py', gameSource(43, 'HintLinkEnv'));
    symlinkSync(join(outside, 'secret.txt'), join(root, 'other', 'game_00001_001_optimization_hint.txt'));
    symlinkSync(join(outside, 'SecretEnv.py'), join(root, 'other', 'alias.py'));

    const s = await importPaths(db, [root]);
    const names = search(db, { query: '', limit: 100 }).rows.map((r) => r.name).sort();
    expect(names).toEqual(['HintLinkEnv', 'InsideEnv']);
    expect(byName('HintLinkEnv').hint).toBeNull();
    const notFollowed = s.skipped.filter((k) => k.reason.startsWith(NOT_FOLLOWED));
    expect(notFollowed.map((k) => k.path).sort()).toEqual(
      [`${join(root, 'manifest.jsonl')}:2`, `${join(root, 'manifest.jsonl')}:3`, join(root, 'linked'), join(root, 'other', 'alias.py'), join(root, 'other', 'game_00001_001_optimization_hint.txt')].sort(),
    );
    expect(notFollowed.find((k) => k.path.endsWith('linked'))?.reason).toContain(join(outside, 'dir'));
    expect(s.skippedByReason[NOT_FOLLOWED]).toBe(5);

    // Asked for explicitly, the links are followed.
    const followed = await importPaths(db, [root], { followLinks: true });
    expect(followed.skipped.filter((k) => k.reason.startsWith(NOT_FOLLOWED))).toEqual([]);
    expect(search(db, { query: '', limit: 100 }).rows.map((r) => r.name).sort()).toEqual(['HintLinkEnv', 'InsideEnv', 'LinkedEnv', 'SecretEnv']);
  });

  it('counts a flood of broken JSONL lines per reason and keeps only the first examples', async () => {
    const path = join(tmp.dir, 'flood.jsonl');
    const fd = openSync(path, 'w');
    const lines = 200_000;
    const chunk = '{"code": \n'.repeat(10_000);
    for (let i = 0; i < lines / 10_000; i++) writeSync(fd, chunk);
    closeSync(fd);
    write(tmp.dir, 'tail.jsonl', `${JSON.stringify({ code: gameSource(44, 'TailEnv') })}\n[1]\n{"nocode": 1}\n`);
    const log = join(tmp.dir, 'logs', 'skipped.jsonl');
    const s = await importPaths(db, [path, join(tmp.dir, 'tail.jsonl')], { skippedLog: log });
    expect(s.imported).toBe(1);
    // Every skip is in the streamed log, one JSON object per line, in order.
    const logged = readFileSync(log, 'utf8').trimEnd().split('\n');
    expect(logged).toHaveLength(lines + 2);
    expect(JSON.parse(logged[0]!)).toMatchObject({ path: `${path}:1` });
    expect(JSON.parse(logged.at(-1)!)).toEqual({ path: `${join(tmp.dir, 'tail.jsonl')}:3`, reason: 'no "code" string' });
    expect(s.skippedLog).toBe(log);
    expect(s.skippedTotal).toBe(lines + 2);
    expect(s.skippedByReason).toEqual({ 'broken JSON': lines, 'not a JSON object': 1, 'no "code" string': 1 });
    expect(s.skipped).toHaveLength(SKIPPED_EXAMPLES);
    expect(s.skipped[0]).toMatchObject({ path: `${path}:1` });
    expect(JSON.stringify(s).length).toBeLessThan(100_000);
  });
});
