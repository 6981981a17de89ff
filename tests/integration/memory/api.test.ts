import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createHandlers } from '../../../core/handlers';
import { createDispatcher } from '../../../core/server/dispatcher';
import { createInProcessBackend } from '../../../core/server/inProcess';
import { Services } from '../../../core/services/services';
import { packageRoot } from '../../../core/base/appInfo';
import type { Backend, ImportProgress } from '../../../core/api';
import { tempDir } from '../../helpers/tmp';
import { gameSource, write } from './fixtures';

let tmp: ReturnType<typeof tempDir>;
let services: Services;
let api: Backend;
beforeEach(() => {
  tmp = tempDir('spade-mem-api-');
  services = new Services({ dataDir: join(tmp.dir, 'data'), shell: 'in-process' });
  api = createInProcessBackend(createDispatcher(createHandlers(services)), services.events);
});
afterEach(async () => {
  api.close();
  await services.close();
  tmp.cleanup();
});

function waitDone(jobId: string): Promise<ImportProgress> {
  return new Promise((resolve) => {
    const off = api.on('memory.importProgress', (p) => {
      if (p.jobId === jobId && (p.phase === 'done' || p.phase === 'failed')) {
        off();
        resolve(p);
      }
    });
  });
}

function pyFiles(dir: string): number {
  return readdirSync(dir).reduce((n, f) => {
    const p = join(dir, f);
    return n + (statSync(p).isDirectory() ? pyFiles(p) : f.endsWith('.py') ? 1 : 0);
  }, 0);
}

describe('memory through the contract', () => {
  it('imports with progress events and a summary, searches, tags, seeds and exports', async () => {
    const src = join(tmp.dir, 'src');
    for (let i = 0; i < 5; i++) write(src, `game_00001_00${i}_optimization.py`, gameSource(i, `Api${i}Env`));
    write(src, 'broken.py', Buffer.from([0xff, 0xfe, 0x00]));
    const done = waitDone('my-job');
    const { jobId } = await api.call('memory.import', { paths: [src], jobId: 'my-job' });
    expect(jobId).toBe('my-job');
    const p = await done;
    expect(p.summary?.imported).toBe(5);
    expect(p.summary?.skipped).toEqual([{ path: join(src, 'broken.py'), reason: 'binary content (NUL bytes)' }]);
    expect((await api.call('memory.importStatus', { jobId })).phase).toBe('done');

    const list = await api.call('memory.search', { query: 'api3' });
    expect(list.rows.map((r) => r.name)).toEqual(['Api3Env']);
    const id = list.rows[0]!.id;
    expect((await api.call('memory.tag', { ids: [id], add: ['keep'] })).changed).toBe(1);
    expect((await api.call('memory.setSeed', { ids: [id], seed: true })).changed).toBe(1);
    const detail = await api.call('memory.get', { id });
    expect(detail.tags).toEqual(['keep']);
    expect(detail.seed).toBe(true);
    expect((await api.call('memory.get', { hash: detail.hash })).id).toBe(id);
    expect((await api.call('memory.versions', { envId: id })).length).toBe(1);
    const upd = await api.call('memory.update', { id, notes: 'seen in run 7', rating: 4 });
    expect(upd.rating).toBe(4);
    const f = await api.call('memory.facets', {});
    expect(f.skills).toEqual([{ value: 'Optimization', count: 5 }]);
    expect(f.seeds).toBe(1);
    const ex = await api.call('memory.export', { selection: { seeds: true }, format: 'spade', outDir: join(tmp.dir, 'ex') });
    expect(ex.count).toBe(1);
    const st = await api.call('memory.stats', {});
    expect(st.environments).toBe(5);
    expect(st.seeds).toBe(1);
  });

  it('rejects bad input with typed errors', async () => {
    await expect(api.call('memory.get', { id: 999 })).rejects.toMatchObject({ code: 'not_found' });
    await expect(api.call('memory.search', { limit: 5000 } as never)).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(api.call('memory.tag', { ids: [1], add: ['has space'] })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(api.call('memory.import', { paths: [] })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(api.call('memory.export', { selection: { seeds: true }, format: 'spade', outDir: join(tmp.dir, 'x') })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(api.call('memory.importStatus', { jobId: 'nope' })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('answers an export to a folder that cannot exist with a clear error, and the backend stays responsive', async () => {
    write(join(tmp.dir, 'src'), 'game_00001_000_optimization.py', gameSource(1));
    const done = waitDone('one');
    await api.call('memory.import', { paths: [join(tmp.dir, 'src')], jobId: 'one' });
    await done;
    await api.call('memory.setSeed', { ids: [1], seed: true });
    // Node's recursive mkdir spins forever under /proc (the backend froze, every call timed out).
    await expect(api.call('memory.export', { selection: { seeds: true }, format: 'spade', outDir: '/proc/nope/seeds' })).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringContaining('Cannot create the folder /proc/nope/seeds'),
    });
    // A file where a folder should be is refused the same way.
    write(tmp.dir, 'afile', 'x');
    await expect(api.call('memory.export', { selection: { seeds: true }, format: 'jsonl', outDir: join(tmp.dir, 'afile', 'out') })).rejects.toMatchObject({ code: 'invalid_input' });
    expect((await api.call('memory.stats', {})).environments).toBe(1);
    const ok = await api.call('memory.export', { selection: { seeds: true }, format: 'spade', outDir: join(tmp.dir, 'deep', 'er', 'out') });
    expect(ok.files).toContain('checksums.sha256');
  });

  it('cancels an import; what was committed stays', async () => {
    const src = join(tmp.dir, 'many');
    for (let i = 0; i < 2000; i++) write(src, `game_00002_${String(i).padStart(4, '0')}_optimization.py`, gameSource(5000 + i));
    const done = waitDone('big');
    await api.call('memory.import', { paths: [src], jobId: 'big' });
    const off = api.on('memory.importProgress', (p) => {
      if (p.jobId === 'big' && p.imported > 0) void api.call('memory.importCancel', { jobId: 'big' });
    });
    const p = await done;
    off();
    expect(p.summary?.cancelled).toBe(true);
    const n = (await api.call('memory.stats', {})).environments;
    expect(n).toBeGreaterThan(0);
    expect(n).toBeLessThan(2000);
    expect(n).toBe(p.summary?.imported);
  });

  it('imports the seed pack on first start, once, with nothing skipped', async () => {
    const seedDir = join(packageRoot(), 'resources', 'seed-pack');
    const expected = pyFiles(seedDir);
    const done = waitDone('seed-pack');
    const job = services.memory.importSeedPackIfEmpty(seedDir);
    expect(job).not.toBeNull();
    const p = await done;
    expect(p.summary?.skipped).toEqual([]);
    expect(p.summary?.imported).toBe(expected);
    const stats = await api.call('memory.stats', {});
    expect(stats.environments).toBe(expected);
    expect(stats.byKind.map((k) => k.value).sort()).toEqual(['game', 'tool-use']);
    // Not again, not even after the library is emptied by hand.
    expect(services.memory.importSeedPackIfEmpty(seedDir)).toBeNull();
  });
});
