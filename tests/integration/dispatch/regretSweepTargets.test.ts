import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend, EventPayload } from '../../../core/api';
import type { RegretReport } from '../../../core/api/calls/runs';
import { createHandlers } from '../../../core/handlers';
import { JobStore } from '../../../core/jobs/jobStore';
import { createDispatcher } from '../../../core/server/dispatcher';
import { createInProcessBackend } from '../../../core/server/inProcess';
import { Services } from '../../../core/services/services';
import { tempDir } from '../../helpers/tmp';
import { ciRay, ciServices } from '../jobs/helpers';
import { importPool } from './pool';

// A regret sweep started the way the Runs page starts it (runs.sweepStart), on the real Ray head
// and through the real Slurm of .ci/services.sh reached as a saved job host: the same report as the
// same sweep run here. The CLI's `regret --on` is covered by regret.test.ts; this is the app's path
// (the service, its progress events and the stored sweep).
const ray = ciRay();
const ci = ciServices();
if (!ray || !ci?.slurm) console.warn('[regret sweep target tests skipped] no Ray head or Slurm: `.ci/services.sh start` (CI does)');
const d = ray && ci?.slurm ? describe : describe.skip;

const root = join(__dirname, '..', '..', '..');
const files = [
  join(root, 'resources', 'seed-pack', 'games', 'game_00000_001_pattern_recognition.py'),
  join(root, 'resources', 'seed-pack', 'games', 'game_00000_003_strategic_planning.py'),
  ...['g01_seeded_win', 'l01_syntax_error', 't01_tool_calls_then_answer'].map((n) => join(root, 'tests', 'fixtures', 'spade-corpus', `${n}.py`)),
];
const SEEDS = 2;

type Sweep = EventPayload<'runs.sweepProgress'>;
type Target = { kind: 'local' } | { kind: 'ray'; address: string; python?: string } | { kind: 'slurm'; host: string };

d('regret sweeps from the app on Ray and Slurm', () => {
  let tmp: ReturnType<typeof tempDir>;
  let services: Services;
  let api: Backend;
  const heard: Sweep[] = [];
  let local: RegretReport;
  // Every seed of every environment, both arms where the game has a hint (the service counts them).
  let total = 0;
  let localTotal = 0;

  /** Starts a sweep and waits for its first event that says it no longer runs. */
  async function sweep(target: Target): Promise<{ end: Sweep; seen: Sweep[]; report: RegretReport }> {
    const started = await api.call('runs.sweepStart', { query: '', estimator: 'paired', seeds: SEEDS, maxTurns: 8, policy: { kind: 'solution' }, target });
    expect(started).toMatchObject({ state: 'running', envs: files.length, seeds: SEEDS });
    total = started.total;
    const end = await new Promise<Sweep>((resolve) => {
      const check = () => {
        const last = heard.find((p) => p.id === started.id && p.state !== 'running');
        if (last) {
          off();
          resolve(last);
        }
      };
      const off = api.on('runs.sweepProgress', check);
      check();
    });
    return { end, seen: heard.filter((p) => p.id === started.id), report: await api.call('runs.sweepReport', { sweepId: started.id }) };
  }

  /** What must be the same wherever the episodes played: the sweep and run ids and the target are not. */
  const same = (r: RegretReport) => ({ ...r, sweep: undefined, run_id: undefined, on: undefined });

  beforeAll(async () => {
    tmp = tempDir('spade-regret-targets-');
    await importPool(tmp.dir, files);
    services = new Services({ dataDir: tmp.dir, shell: 'in-process' });
    api = createInProcessBackend(createDispatcher(createHandlers(services)), services.events);
    api.on('runs.sweepProgress', (p) => heard.push(p));
    const here = await sweep({ kind: 'local' });
    expect(here.end, here.end.message ?? '').toMatchObject({ state: 'done', done: total });
    localTotal = total;
    expect(localTotal).toBeGreaterThan(files.length * SEEDS);
    local = here.report;
    expect(local.envs).toHaveLength(files.length);
    // Not a trivial pool: a game that does not load, games played with and without the hint.
    expect(local.envs.some((e) => e.failed > 0)).toBe(true);
    expect(local.envs.some((e) => e.returns_hint.length === SEEDS && e.returns_no_hint.length === SEEDS)).toBe(true);
    expect(local.envs.flatMap((e) => [...e.returns_hint, ...e.returns_no_hint])).toEqual(expect.arrayContaining([0, 1]));
  }, 90_000);
  afterAll(async () => {
    api.close();
    await services.close();
    tmp.cleanup();
  });

  it('on the real Ray head: progress as episodes arrive, and the report a local sweep gives', async () => {
    const { end, seen, report } = await sweep({ kind: 'ray', address: new URL(ray!.address).host, python: join(ray!.bin, 'python') });
    expect(end, end.message ?? '').toMatchObject({ state: 'done', done: localTotal, total: localTotal });
    expect(seen.some((p) => p.state === 'running' && p.done > 0 && p.done < localTotal)).toBe(true);
    expect(report.on).toBe(`ray://${new URL(ray!.address).host}`);
    expect(same(report)).toEqual(same(local));
  }, 240_000);

  it('through the real Slurm of a saved job host: the report a local sweep gives', async () => {
    const at = new Date().toISOString();
    // The record a Slurm launch from the Jobs page leaves: its SSH target is the saved host.
    new JobStore(services.db).insert({
      id: 'saved-slurm-host', name: 'earlier launch', backend: 'slurm', host: ci!.host, recipe: null,
      spec: { name: 'earlier launch', backend: 'slurm', command: ['true'], workdir: '/tmp', env: {}, secretEnv: [], ssh: { host: ci!.host, port: ci!.port, user: ci!.user, identityFile: ci!.key, knownHostsFile: ci!.knownHosts }, outputs: {}, ship: [], importEnvironments: false },
      externalId: null, state: 'succeeded', detail: '', exitCode: 0, remoteLog: null, logOffset: 0, localLogSize: 0, metricsOffset: 0, createdAt: at, startedAt: at, finishedAt: at, updatedAt: at,
    });
    const label = `${ci!.user}@${ci!.host}:${ci!.port}`;
    const { end, report } = await sweep({ kind: 'slurm', host: label });
    expect(end, end.message ?? '').toMatchObject({ state: 'done', done: localTotal, total: localTotal });
    expect(report.on).toBe(`slurm:${label}`);
    expect(same(report)).toEqual(same(local));
  }, 240_000);
});
