/**
 * A fresh library's seed pack is what `tag:seed` selects (its files tag it; the seed flag, `is:seed`,
 * stays the researcher's own curation and selects nothing on a fresh library), both where it comes
 * from the app's first start (MemoryService, import worker path in-process) and where a CLI command
 * (`train` on a new data dir) imports it itself; a game the user imports is not in it.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { Services } from '../../../core/services/services';
import { openDataDir } from '../../../core/memory/cliDb';
import { importPaths } from '../../../core/memory/importer';
import { search } from '../../../core/memory/repository';
import { importSeedPackIfDue, seedPackDir } from '../../../core/memory/seedPack';
import { resolveEnvs } from '../../../core/openenv/tasks';
import { tempDir } from '../../helpers/tmp';
import { gameSource, write } from './fixtures';

const tmp = tempDir('spade-seed-sel-');
afterAll(() => tmp.cleanup());

function packHashes(db: Parameters<typeof search>[0], query: string): string[] {
  return search(db, { query, limit: 1000, filters: {} }).rows.map((r) => r.name).sort();
}
const pyFiles = (dir: string): number => readdirSync(dir).reduce((n, f) => n + (statSync(join(dir, f)).isDirectory() ? pyFiles(join(dir, f)) : f.endsWith('.py') ? 1 : 0), 0);

it("selects the pack by tag:seed after the app's first start, and leaves the seed flag to the researcher", async () => {
  const services = new Services({ dataDir: join(tmp.dir, 'app'), shell: 'in-process' });
  try {
    const job = services.memory.importSeedPackIfEmpty();
    expect(job).not.toBeNull();
    expect((await job!.done)?.skipped).toEqual([]);
    const all = packHashes(services.db, '');
    expect(all).toHaveLength(pyFiles(seedPackDir()));
    expect(packHashes(services.db, 'tag:seed')).toEqual(all);
    expect(packHashes(services.db, 'is:seed')).toEqual([]);
    // A user's own game is not a seed.
    const mine = join(tmp.dir, 'mine');
    write(mine, 'game_00001_001_logical_deduction.py', gameSource(1, 'MineEnv'));
    await importPaths(services.db, [mine]);
    expect(packHashes(services.db, '')).toContain('MineEnv');
    expect(packHashes(services.db, 'tag:seed')).toEqual(all);
  } finally {
    await services.close();
  }
});

it('imports the pack once on a new data dir for a CLI command, and train\'s selection "tag:seed" then resolves to its games', async () => {
  const { db } = openDataDir(join(tmp.dir, 'cli'));
  try {
    expect(resolveEnvs(db, { selection: 'tag:seed' }).envs).toEqual([]);
    const summary = await importSeedPackIfDue(db);
    expect(summary?.imported).toBe(pyFiles(seedPackDir()));
    expect(await importSeedPackIfDue(db)).toBeNull();
    const r = resolveEnvs(db, { selection: 'tag:seed' });
    const games = readdirSync(join(seedPackDir(), 'games')).filter((f) => f.endsWith('.py')).length;
    expect(r.envs.length + r.skipped.length).toBe(pyFiles(seedPackDir()));
    expect(r.envs.length).toBe(games);
  } finally {
    db.close();
  }
});
