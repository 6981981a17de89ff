import { build } from 'esbuild';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../core/memory/db';
import { MemoryService } from '../../../core/memory/service';
import { search } from '../../../core/memory/repository';
import { EventBus } from '../../../core/server/events';
import { tempDir } from '../../helpers/tmp';
import { gameSource, write } from './fixtures';

// The built app imports in a worker thread (dist/node/memory-worker.js); a source run never does.
// This bundles the worker the way scripts/build.mjs does and drives imports through it.
const outDir = join(process.cwd(), 'dist', 'test-memory-worker');
const workerFile = join(outDir, 'memory-worker.js');
beforeAll(async () => {
  await build({
    entryPoints: { 'memory-worker': 'core/memory/worker.ts' },
    outdir: outDir,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
}, 120_000);

let tmp: ReturnType<typeof tempDir>;
afterAll(() => tmp?.cleanup());

describe('imports in the worker thread', () => {
  it('runs two imports at once, each to its own complete summary, while the main thread keeps reading', async () => {
    tmp = tempDir('spade-worker-');
    const dbPath = join(tmp.dir, 'workbench.sqlite');
    const db = openDatabase(dbPath);
    const a = join(tmp.dir, 'a');
    const b = join(tmp.dir, 'b');
    for (let i = 0; i < 40; i++) write(a, `game_00001_${String(i).padStart(3, '0')}_optimization.py`, gameSource(1000 + i, `Alpha${i}Env`));
    for (let i = 0; i < 30; i++) write(b, `game_00002_${String(i).padStart(3, '0')}_planning.py`, gameSource(2000 + i, `Beta${i}Env`));
    write(b, 'notes.bin', 'x');
    const events = new EventBus();
    const phases = new Map<string, string[]>();
    events.subscribe((name, p) => {
      if (name !== 'memory.importProgress') return;
      const q = p as { jobId: string; phase: string };
      phases.set(q.jobId, [...(phases.get(q.jobId) ?? []), q.phase]);
    });
    const svc = new MemoryService({ db, dbPath, events, log: () => {}, workerFile });
    const first = svc.startImport([a], { jobId: 'first' });
    const second = svc.startImport([b], { jobId: 'second' });
    expect(svc.busy()).toBe(2);
    const [sa, sb] = await Promise.all([first.done, second.done]);
    expect(sa).toMatchObject({ imported: 40, skippedTotal: 0, cancelled: false });
    expect(sb).toMatchObject({ imported: 30, skippedTotal: 1, skippedByReason: { 'not an environment file': 1 }, skippedLog: join(tmp.dir, 'imports', 'second-skipped.jsonl') });
    expect(sa!.skippedLog).toBeUndefined();
    expect(svc.status('first').phase).toBe('done');
    expect(svc.status('second').phase).toBe('done');
    expect(phases.get('first')?.at(-1)).toBe('done');
    expect(phases.get('first')).not.toContain('failed');
    expect(search(db, { query: 'alpha' }).total).toBe(40);
    expect(search(db, { query: 'beta' }).total).toBe(30);
    // No import bookkeeping table left for a second thread to mark the first one "interrupted".
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'imports'").get()).toBeUndefined();
    await svc.close();
    db.close();
  });

  it('cancels an import running in the worker', async () => {
    const dir = tempDir('spade-worker-c-');
    const dbPath = join(dir.dir, 'workbench.sqlite');
    const db = openDatabase(dbPath);
    const src = join(dir.dir, 'many');
    for (let i = 0; i < 400; i++) write(src, `game_00003_${String(i).padStart(3, '0')}_optimization.py`, gameSource(3000 + i, `Gamma${i}Env`));
    const svc = new MemoryService({ db, dbPath, events: new EventBus(), log: () => {}, workerFile });
    const job = svc.startImport([src], { jobId: 'c' });
    expect(svc.cancel('c')).toBe(true);
    const s = await job.done;
    expect(s?.cancelled).toBe(true);
    expect(s!.imported).toBeLessThan(400);
    await svc.close();
    db.close();
    dir.cleanup();
  });
});
