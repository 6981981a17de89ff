import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend } from '../../../core/api';
import { createHandlers } from '../../../core/handlers';
import { createDispatcher } from '../../../core/server/dispatcher';
import { createInProcessBackend } from '../../../core/server/inProcess';
import { Services } from '../../../core/services/services';
import { startStandIn, type StandIn } from '../../helpers/standInOpenAi';
import { tempDir } from '../../helpers/tmp';
import { cli, importPool, poolFiles } from './pool';

// A regret sweep that `spade-workbench regret --pool` (a real second process, the CLI of dist/node)
// runs on the memory file the app has open: the app lists it as running elsewhere, with its count
// moving as episodes land, and offers no resume or cancel of it (two drivers would count episodes
// twice); once that process is killed with -9 it is interrupted at once, and resumes here to the end
// with every episode counted once.

const root = join(__dirname, '..', '..', '..');
let tmp: ReturnType<typeof tempDir>;
let server: StandIn;
let child: ChildProcess | null = null;
/** Each model answer waits for the test to let one through. */
const gates: (() => void)[] = [];
let open = false;

beforeAll(async () => {
  tmp = tempDir('spade-sweep-elsewhere-');
  await importPool(tmp.dir, poolFiles(2));
  server = await startStandIn(() => (open ? { content: '\\boxed{1}' } : { content: '\\boxed{1}', after: new Promise<void>((r) => gates.push(r)) }));
}, 60_000);
afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  open = true;
  for (const g of gates.splice(0)) g();
  await server.close();
  tmp.cleanup();
});

/** Resolves once check() holds (asked every 50 ms, for at most 30 s). */
async function until<T>(what: string, check: () => T | null | undefined | false | Promise<T | null | undefined | false>): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const v = await check();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never: ${what}`);
}

describe('a sweep run by another process on the same memory file', () => {
  it('shows as running elsewhere with its progress, refuses resume and cancel, and is interrupted once that process is killed', async () => {
    const services = new Services({ dataDir: tmp.dir, shell: 'in-process' });
    const api: Backend = createInProcessBackend(createDispatcher(createHandlers(services)), services.events);
    try {
      let err = '';
      child = spawn(process.execPath, [join(root, 'bin', 'spade-workbench.mjs'), 'regret', '--pool', '', '--estimator', 'paired', '--seeds', '2', '--max-turns', '2', '--endpoint', server.url, '--model', 'stand-in', '--concurrency', '1', '--data-dir', tmp.dir], {
        env: process.env,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      child.stderr!.on('data', (b: Buffer) => void (err += b.toString()));
      const pid = child.pid!;

      // The CLI's first model call waits: the sweep is stored, its process alive, nothing played yet.
      await until('the first model call', () => {
        if (child!.exitCode !== null) throw new Error(`the CLI ended: ${err}`);
        return gates.length > 0;
      });
      const [first] = await api.call('runs.sweeps', { limit: 5 });
      expect(first).toMatchObject({ state: 'elsewhere', done: 0 });
      expect(first!.total).toBeGreaterThan(4);
      expect(first!.message).toContain(`process ${pid}`);
      await expect(api.call('runs.sweepResume', { sweepId: first!.id })).rejects.toThrow(/running in process \d+/);
      await expect(api.call('runs.sweepCancel', { sweepId: first!.id })).rejects.toThrow(/running in process \d+; stop it there/);
      // A workbench that starts now leaves its run record running (it marks the runs a stopped workbench left as interrupted).
      const late = new Services({ dataDir: tmp.dir, shell: 'in-process' });
      try {
        expect(late.runs.get(first!.runId).run.status).toBe('running');
      } finally {
        await late.close();
      }
      // The same command a second time finds the sweep (to resume it) and is refused in words; the sweep is left as it was.
      const again = await cli(['regret', '--pool', '', '--estimator', 'paired', '--seeds', '2', '--max-turns', '2', '--endpoint', server.url, '--model', 'stand-in', '--concurrency', '1', '--data-dir', tmp.dir]);
      expect(again.code).not.toBe(0);
      expect(again.err).toContain(`Regret sweep ${first!.id} is running in process ${pid}`);
      expect((await api.call('runs.sweeps', { limit: 5 }))[0]).toMatchObject({ id: first!.id, state: 'elsewhere' });
      // Nor can the command line cancel it here: marked cancelled, it would go on in its own process.
      const cancel = await cli(['regret', '--cancel', first!.id, '--data-dir', tmp.dir]);
      expect(cancel.code).toBe(1);
      expect(cancel.err).toContain(`Regret sweep ${first!.id} is running in process ${pid}; it cannot be cancelled here`);
      expect((await api.call('runs.sweeps', { limit: 5 }))[0]).toMatchObject({ id: first!.id, state: 'elsewhere' });

      // Its episodes land in the database one by one (an episode is a call a turn) and the list counts them as they do.
      const seen: number[] = [];
      for (let k = 0; k < 3; k++) {
        const s = await until(`episode ${k + 1}`, async () => {
          gates.shift()?.();
          const [x] = await api.call('runs.sweeps', { limit: 5 });
          return x!.done > (seen.at(-1) ?? 0) ? x! : null;
        });
        expect(s.state).toBe('elsewhere');
        seen.push(s.done);
      }
      expect(seen[0]).toBeGreaterThan(0);
      expect(new Set(seen).size).toBe(3);

      // Killed with -9 it leaves its owner behind, which is no process now: interrupted, no lease to wait out.
      child.kill('SIGKILL');
      await new Promise((r) => child!.once('exit', r));
      const [killed] = await api.call('runs.sweeps', { limit: 5 });
      expect(killed).toMatchObject({ id: first!.id, state: 'interrupted', message: null });
      expect(killed!.done).toBeGreaterThanOrEqual(seen.at(-1)!);

      // Resumed here, it plays what is left; every episode counted once.
      open = true;
      for (const g of gates.splice(0)) g();
      const ended = new Promise((resolve) => api.on('runs.sweepProgress', (s) => s.id === first!.id && s.state === 'done' && resolve(s)));
      await api.call('runs.sweepResume', { sweepId: first!.id });
      await ended;
      const n = services.db.prepare('SELECT COUNT(*) AS n, COUNT(DISTINCT item_key) AS d FROM sweep_results WHERE sweep_id = ?').get(first!.id) as { n: number; d: number };
      expect(n).toEqual({ n: first!.total, d: first!.total });
    } finally {
      api.close();
      await services.close();
    }
  }, 120_000);
  it('a pool audit the command line runs: running elsewhere while its process lives (stopped with SIGSTOP to hold it mid-way), interrupted once it is killed, then resumed here', async () => {
    const services = new Services({ dataDir: tmp.dir, shell: 'in-process' });
    const api: Backend = createInProcessBackend(createDispatcher(createHandlers(services)), services.events);
    let err = '';
    const cliChild = spawn(process.execPath, [join(root, 'bin', 'spade-workbench.mjs'), 'audit', '--pool', '', '--workers', '1', '--data-dir', tmp.dir, '--json'], { env: process.env, stdio: ['ignore', 'ignore', 'pipe'] });
    child = cliChild;
    cliChild.stderr!.on('data', (b: Buffer) => void (err += b.toString()));
    try {
      // Held the moment it owns the sweep: alive, not moving.
      const owned = await until('the command line owns its sweep', () => {
        if (cliChild.exitCode !== null) throw new Error(`the CLI ended before it could be held: ${err}`);
        return services.db.prepare("SELECT id FROM sweeps WHERE kind = 'audit' AND owner IS NOT NULL").get() as { id: string } | undefined;
      });
      cliChild.kill('SIGSTOP');
      const [held] = await api.call('audit.sweeps', { limit: 5 });
      expect(held).toMatchObject({ id: owned.id, state: 'elsewhere' });
      expect(held!.message).toContain(`process ${cliChild.pid}`);
      await expect(api.call('audit.sweepResume', { sweepId: owned.id })).rejects.toThrow(/running in process \d+/);
      await expect(api.call('audit.sweepCancel', { sweepId: owned.id })).rejects.toThrow(/stop it there/);
      const cancel = await cli(['audit', '--cancel', owned.id, '--data-dir', tmp.dir]);
      expect(cancel.code).toBe(1);
      expect(cancel.err).toContain(`Audit sweep ${owned.id} is running in process ${cliChild.pid}; it cannot be cancelled here`);
      expect((await api.call('audit.sweeps', { limit: 5 }))[0]).toMatchObject({ id: owned.id, state: 'elsewhere' });

      cliChild.kill('SIGKILL');
      await new Promise((r) => cliChild.once('exit', r));
      const [killed] = await api.call('audit.sweeps', { limit: 5 });
      expect(killed).toMatchObject({ id: owned.id, state: 'interrupted' });

      const ended = new Promise((resolve) => api.on('audit.sweepProgress', (x) => x.id === owned.id && x.state !== 'running' && resolve(x)));
      await api.call('audit.sweepResume', { sweepId: owned.id });
      expect(await ended).toMatchObject({ state: 'done' });
      const n = services.db.prepare('SELECT COUNT(*) AS n, COUNT(DISTINCT item_key) AS d FROM sweep_results WHERE sweep_id = ?').get(owned.id) as { n: number; d: number };
      expect(n).toEqual({ n: killed!.total, d: killed!.total });
    } finally {
      if (cliChild.exitCode === null) cliChild.kill('SIGKILL');
      api.close();
      await services.close();
    }
  }, 120_000);
});
