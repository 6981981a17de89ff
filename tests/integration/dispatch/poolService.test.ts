import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, type Backend, type EventPayload } from '../../../core/api';
import { createHandlers } from '../../../core/handlers';
import { createDispatcher } from '../../../core/server/dispatcher';
import { createInProcessBackend } from '../../../core/server/inProcess';
import { Services } from '../../../core/services/services';
import { JobStore } from '../../../core/jobs/jobStore';
import { tempDir } from '../../helpers/tmp';
import { ciRay, ciServices } from '../jobs/helpers';
import { importPool, poolFiles } from './pool';

// The pool audit as the app's API starts it (audit.poolStart and its sweep calls), on this machine,
// the real Ray head and the real Slurm of .ci/services.sh, reached as the Jobs page's saved host.
// A handful of seed-pack games: the differential test covers the 60.
const ray = ciRay();
const ci = ciServices();
if (!ray || !ci?.slurm) console.warn('[pool service tests: Ray and Slurm parts skipped] no Ray head or Slurm: `.ci/services.sh start` (CI does)');
const N = 3;

type Sweep = EventPayload<'audit.sweepProgress'>;

let tmp: ReturnType<typeof tempDir>;
let services: Services;
let api: Backend;
const heard: Sweep[] = [];

/** The sweep's first event after `since` (an index into heard) that says it no longer runs. */
function ended(id: string, since: number): Promise<Sweep> {
  return new Promise((resolve) => {
    const check = () => {
      const last = heard.slice(since).find((p) => p.id === id && p.state !== 'running');
      if (last) {
        off();
        resolve(last);
      }
    };
    const off = api.on('audit.sweepProgress', check);
    check();
  });
}

beforeAll(async () => {
  tmp = tempDir('spade-pool-service-');
  await importPool(tmp.dir, poolFiles(N));
  services = new Services({ dataDir: tmp.dir, shell: 'in-process' });
  api = createInProcessBackend(createDispatcher(createHandlers(services)), services.events);
  api.on('audit.sweepProgress', (p) => heard.push(p));
}, 60_000);
afterAll(async () => {
  api.close();
  await services.close();
  tmp.cleanup();
});

/** Verdict and failing checks by environment, without `timing` (wall time moves with the machine's load). */
async function verdicts(id: string): Promise<unknown[]> {
  const rows = await api.call('audit.sweepResults', { sweepId: id });
  return rows.map((r) => ({ name: r.name, hash: r.hash, spade: r.spadeAccepts, failing: r.failing.filter((c) => c !== 'timing') }));
}

describe('pool audit sweeps through the API', () => {
  let local: unknown[] = [];

  it('on this machine by default: progress events, every environment audited once, results stored as the audit report reads them', async () => {
    const mark = heard.length;
    const started = await api.call('audit.poolStart', { query: '' });
    expect(started).toMatchObject({ state: 'running', target: 'local', total: N });
    const end = await ended(started.id, mark);
    expect(end).toMatchObject({ state: 'done', done: N, total: N });
    expect(heard.slice(mark).some((p) => p.id === started.id && p.state === 'running')).toBe(true);
    const rows = await api.call('audit.sweepResults', { sweepId: started.id });
    expect(rows.every((r) => r.verdict !== null && r.envId !== null)).toBe(true);
    // A full check set is kept as each version's audit: the environment's audit page shows it.
    for (const r of rows) expect((await api.call('audit.results', { hash: r.hash }))?.verdict).toBe(r.verdict);
    const listed = (await api.call('audit.sweeps', {})).find((s) => s.id === started.id);
    expect(listed).toMatchObject({ state: 'done', done: N, failed: rows.filter((r) => r.verdict === 'fail').length });
    local = await verdicts(started.id);
  }, 120_000);

  it('cancel stops a running sweep, keeps what arrived, and resume finishes it with nothing counted twice', async () => {
    const mark = heard.length;
    const started = await api.call('audit.poolStart', { query: '', checks: ['spade.*'] });
    const c = await api.call('audit.sweepCancel', { sweepId: started.id });
    expect(c.cancelled).toBe(true);
    expect((await ended(started.id, mark)).state).toBe('cancelled');
    const again = heard.length;
    const resumed = await api.call('audit.sweepResume', { sweepId: started.id });
    expect(resumed.state).toBe('running');
    const end = await ended(started.id, again);
    expect(end).toMatchObject({ state: 'done', done: N, total: N });
    const n = services.db.prepare('SELECT COUNT(*) AS n FROM sweep_results WHERE sweep_id = ?').get(started.id) as { n: number };
    expect(n.n).toBe(N);
  }, 120_000);

  it('refuses bad input with a clear error and starts nothing', async () => {
    const before = (await api.call('audit.sweeps', { limit: 200 })).length;
    for (const [input, pattern] of [
      [{ query: '', target: { kind: 'ray', address: 'not a host/at all' } }, /Not a Ray address/],
      [{ query: '', checks: ['no-such-check'] }, /Unknown check id/],
      [{ query: 'no-such-environment-anywhere' }, /No environment in the library matches "no-such-environment-anywhere"/],
    ] as const) {
      const e = await api.call('audit.poolStart', input as never).then(() => null, (x: unknown) => x);
      expect(e).toBeInstanceOf(ApiError);
      expect((e as ApiError).code).toBe('invalid_input');
      expect((e as ApiError).message).toMatch(pattern);
    }
    expect((await api.call('audit.sweeps', { limit: 200 })).length).toBe(before);
    const missing = await api.call('audit.sweepResume', { sweepId: 'nope' }).then(() => null, (x: unknown) => x);
    expect((missing as ApiError).code).toBe('not_found');
  });

  (ray ? it : it.skip)('on the real Ray head: the same verdicts as here', async () => {
    const mark = heard.length;
    const started = await api.call('audit.poolStart', { query: '', target: { kind: 'ray', address: new URL(ray!.address).host, python: join(ray!.bin, 'python') } });
    expect(started.target).toBe(`ray://${new URL(ray!.address).host}`);
    const end = await ended(started.id, mark);
    expect(end, end.message ?? '').toMatchObject({ state: 'done', done: N });
    expect(await verdicts(started.id)).toEqual(local);
  }, 240_000);

  (ci?.slurm ? it : it.skip)('through the real Slurm of a saved job host: listed from the jobs kept, the same verdicts', async () => {
    const at = new Date().toISOString();
    // The record a Slurm launch from the Jobs page leaves: its SSH target is the saved host.
    new JobStore(services.db).insert({
      id: 'saved-slurm-host', name: 'earlier launch', backend: 'slurm', host: ci!.host, recipe: null,
      spec: { name: 'earlier launch', backend: 'slurm', command: ['true'], workdir: '/tmp', env: {}, secretEnv: [], ssh: { host: ci!.host, port: ci!.port, user: ci!.user, identityFile: ci!.key, knownHostsFile: ci!.knownHosts }, outputs: {}, ship: [], importEnvironments: false },
      externalId: null, state: 'succeeded', detail: '', exitCode: 0, remoteLog: null, logOffset: 0, localLogSize: 0, metricsOffset: 0, createdAt: at, startedAt: at, finishedAt: at, updatedAt: at,
    });
    const { hosts } = await api.call('audit.sweepHosts', {});
    const label = `${ci!.user}@${ci!.host}:${ci!.port}`;
    expect(hosts).toContain(label);
    const mark = heard.length;
    const started = await api.call('audit.poolStart', { query: '', target: { kind: 'slurm', host: label } });
    const end = await ended(started.id, mark);
    expect(end, end.message ?? '').toMatchObject({ state: 'done', done: N });
    expect(await verdicts(started.id)).toEqual(local);
  }, 240_000);
});
