import { afterEach, describe, expect, it } from 'vitest';
import { buildSpec } from '../../../core/jobs/launch';
import type { JobBackend, JobRecord, StatusReport } from '../../../core/jobs/types';
import { tempDir } from '../../helpers/tmp';
import { makeManager } from './helpers';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A backend whose status answers only when the test lets it: a poll held in flight at will. */
function gatedBackend(): { backend: JobBackend; release(): void; statusCalls: number; closed: number; removed: string[] } {
  let open: (() => void) | null = null;
  let gate = new Promise<void>((r) => (open = r));
  const out = {
    statusCalls: 0,
    closed: 0,
    removed: [] as string[],
    release(): void {
      open?.();
      gate = new Promise<void>((r) => (open = r));
    },
    backend: {
      kind: 'local' as const,
      submit: () => Promise.resolve({ externalId: 'x1', remoteLog: null, state: 'running' as const }),
      status: async (): Promise<StatusReport> => {
        out.statusCalls++;
        await gate;
        return { state: 'succeeded', detail: 'done', exitCode: 0 };
      },
      readLog: () => Promise.resolve(null),
      stop: () => Promise.resolve('stopped'),
      files: () => Promise.resolve(null),
      remove: (job: JobRecord) => {
        out.removed.push(job.id);
        return Promise.resolve();
      },
      close: () => {
        out.closed++;
      },
    },
  };
  return out;
}

describe('job manager', () => {
  it('shares the poll in flight and close() waits for it however long it takes', async () => {
    const tmp = tempDir('spade-jobs-mgr-');
    const g = gatedBackend();
    const { db, manager } = makeManager(tmp.dir, { backends: { local: g.backend }, pollMs: 60_000 });
    cleanups.push(() => {
      db.close();
      tmp.cleanup();
    });
    const job = await manager.submit(buildSpec({ name: 'gated', backend: 'local', command: ['true'], workdir: tmp.dir, poolDir: null }));
    // The follower's first poll is in flight; a second caller joins it rather than starting one.
    await new Promise((r) => setTimeout(r, 50));
    const second = manager.poll(job.id);
    expect(g.statusCalls).toBe(1);
    let closed = false;
    const closing = manager.close().then(() => (closed = true));
    // Far longer than any fixed wait a busy loop would give up after.
    await new Promise((r) => setTimeout(r, 11_000));
    expect(closed).toBe(false);
    expect(g.closed).toBe(0);
    g.release();
    await second;
    await closing;
    expect(g.statusCalls).toBe(1);
    expect(g.closed).toBe(1);
    expect(manager.get(job.id).state).toBe('succeeded');
    // remove() asks the backend port, whatever the backend is.
    await manager.remove(job.id);
    expect(g.removed).toEqual([job.id]);
  }, 20_000);
});

describe('job manager polling', () => {
  it('backs off on a quiet Slurm job, and polls fast while its page is open', async () => {
    const tmp = tempDir('spade-jobs-mgr2-');
    const calls: number[] = [];
    const slurm: JobBackend = {
      kind: 'slurm',
      submit: () => Promise.resolve({ externalId: '42', remoteLog: null, state: 'running' }),
      status: () => {
        calls.push(Date.now());
        return Promise.resolve({ state: 'running', detail: 'slurm job 42: RUNNING' });
      },
      readLog: () => Promise.resolve(null),
      stop: () => Promise.resolve('stopped'),
      files: () => Promise.resolve(null),
    };
    const { db, manager } = makeManager(tmp.dir, { backends: { slurm }, pollMs: 50, slurmPollMs: { min: 200, max: 800 } });
    cleanups.push(async () => {
      await manager.close();
      db.close();
      tmp.cleanup();
    });
    const job = await manager.submit(buildSpec({ name: 'quiet', backend: 'slurm', ssh: { host: 'nowhere' }, command: ['true'], poolDir: null, importEnvironments: false }));
    await new Promise((r) => setTimeout(r, 3000));
    const quiet = calls.length;
    // 0, then 200, 400, 800, 800... ms apart: a handful, not 3000/50 = 60.
    expect(quiet).toBeGreaterThanOrEqual(3);
    expect(quiet).toBeLessThanOrEqual(8);
    const gaps = calls.slice(1).map((t, i) => t - calls[i]!);
    expect(Math.max(...gaps)).toBeGreaterThanOrEqual(700);
    manager.watch(job.id);
    await new Promise((r) => setTimeout(r, 1000));
    expect(calls.length - quiet).toBeGreaterThanOrEqual(8);
  }, 20_000);
});
