import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Backend, ImportProgress } from '../../../core/api';
import { createHandlers } from '../../../core/handlers';
import { createDispatcher } from '../../../core/server/dispatcher';
import { createInProcessBackend } from '../../../core/server/inProcess';
import { Services } from '../../../core/services/services';
import { sha256 } from '../../../core/memory/parse';
import { tempDir } from '../../helpers/tmp';

const GAME = readFileSync('resources/seed-pack/games/game_00000_001_pattern_recognition.py', 'utf8');

let tmp: ReturnType<typeof tempDir>;
let services: Services;
let api: Backend;
beforeEach(() => {
  tmp = tempDir('spade-writeback-');
  services = new Services({ dataDir: join(tmp.dir, 'data'), shell: 'in-process' });
  api = createInProcessBackend(createDispatcher(createHandlers(services)), services.events);
});
afterEach(async () => {
  api.close();
  await services.close();
  tmp.cleanup();
});

async function importDir(dir: string, jobId: string): Promise<ImportProgress> {
  const done = new Promise<ImportProgress>((resolve) => {
    const off = api.on('memory.importProgress', (p) => {
      if (p.jobId === jobId && (p.phase === 'done' || p.phase === 'failed')) {
        off();
        resolve(p);
      }
    });
  });
  await api.call('memory.import', { paths: [dir], jobId });
  return done;
}

describe('write back to the source file', () => {
  it('shows the diff first, keeps the original, writes the head, and a re-import finds it unchanged', async () => {
    const run = join(tmp.dir, 'run', 'games');
    mkdirSync(run, { recursive: true });
    const file = join(run, 'game_00000_001_pattern_recognition.py');
    writeFileSync(file, GAME);
    expect((await importDir(join(tmp.dir, 'run'), 'first')).summary?.imported).toBe(1);
    const { rows } = await api.call('memory.search', { query: '' });
    const envId = rows[0]!.id;

    // Nothing to write yet: the file holds the head.
    const same = await api.call('editor.writeBackPreview', { envId });
    expect(same.state).toBe('same');
    expect(same.patch).toBe('');

    const fixed = GAME.replace(/\n/, '\n# fixed in the workbench\n');
    const saved = await api.call('editor.save', { envId, parentHash: sha256(GAME), source: fixed, message: 'fix', check: false });
    const p = await api.call('editor.writeBackPreview', { envId });
    expect(p.state).toBe('differs');
    expect(p.path).toBe(file);
    expect(p.fileIsKnownVersion).toBe(true);
    expect(p.hash).toBe(saved.hash);
    expect(p.patch).toContain('+# fixed in the workbench');
    expect(p.patch).toMatch(/^--- a\/game_00000_001_pattern_recognition\.py\n\+\+\+ b\/game_00000_001_pattern_recognition\.py\n@@ /);
    // The preview wrote nothing.
    expect(readFileSync(file, 'utf8')).toBe(GAME);

    // Someone edits the file after the preview: the write is refused, nothing lost.
    writeFileSync(file, `${GAME}# edited by hand\n`);
    await expect(api.call('editor.writeBack', { envId, expectedFileHash: p.fileHash })).rejects.toMatchObject({ code: 'conflict' });
    expect(readFileSync(file, 'utf8')).toBe(`${GAME}# edited by hand\n`);
    writeFileSync(file, GAME);

    const w = await api.call('editor.writeBack', { envId, expectedFileHash: p.fileHash });
    expect(w.written).toBe(true);
    expect(w.backupPath).toBe(`${file}.orig`);
    expect(readFileSync(file, 'utf8')).toBe(fixed);
    expect(readFileSync(`${file}.orig`, 'utf8')).toBe(GAME);

    // The run's folder imported again: the same environment, unchanged, nothing new.
    const again = await importDir(join(tmp.dir, 'run'), 'again');
    expect(again.summary?.imported).toBe(0);
    expect(again.summary?.updated).toBe(0);
    expect(again.summary?.unchanged).toBe(1);
    expect((await api.call('memory.get', { id: envId })).hash).toBe(saved.hash);
    // A second write-back of an older version keeps the first original too.
    const back = await api.call('editor.writeBackPreview', { envId, hash: sha256(GAME) });
    const w2 = await api.call('editor.writeBack', { envId, hash: sha256(GAME), expectedFileHash: back.fileHash });
    expect(w2.backupPath).toBe(`${file}.orig.2`);
    expect(existsSync(`${file}.orig`)).toBe(true);
  });

  it('refuses an environment that did not come from a file, or comes from the bundled seed pack', async () => {
    const made = await api.call('editor.create', { source: GAME, origin: 'paste' });
    await expect(api.call('editor.writeBackPreview', { envId: made.envId })).rejects.toMatchObject({ code: 'invalid_input' });
    const seedGame = join(process.cwd(), 'resources', 'seed-pack', 'games');
    await importDir(seedGame, 'seed');
    const { rows } = await api.call('memory.search', { query: 'GridWalkEnv' });
    await expect(api.call('editor.writeBackPreview', { envId: rows[0]!.id })).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringContaining('seed pack') });
  });
});

describe("a measured regret stored in the environment's stats", () => {
  it('sets regret, r_hint, r_no_hint and win rate of the environment holding the version', async () => {
    const made = await api.call('editor.create', { source: GAME, origin: 'paste' });
    const changed: unknown[] = [];
    const off = api.on('memory.changed', (c) => changed.push(c));
    const env = await api.call('memory.setStats', { hash: made.hash, regret: 0.5, rHint: 0.75, rNoHint: 0.25, winRate: 0.2 });
    off();
    expect([env.regret, env.rHint, env.rNoHint, env.winRate]).toEqual([0.5, 0.75, 0.25, 0.2]);
    expect((await api.call('memory.get', { id: made.envId })).regret).toBe(0.5);
    expect(changed).toEqual([{ ids: [made.envId], reason: 'stats' }]);
    await expect(api.call('memory.setStats', { hash: '0'.repeat(64), regret: 0, rHint: 0, rNoHint: 0 })).rejects.toMatchObject({ code: 'not_found' });
  });
});
