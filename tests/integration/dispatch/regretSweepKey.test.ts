import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend, EventPayload } from '../../../core/api';
import { createHandlers } from '../../../core/handlers';
import { JobStore } from '../../../core/jobs/jobStore';
import { SshConnection } from '../../../core/jobs/ssh/connection';
import { createDispatcher } from '../../../core/server/dispatcher';
import { createInProcessBackend } from '../../../core/server/inProcess';
import { Services } from '../../../core/services/services';
import { startStandIn, type StandIn } from '../../helpers/standInOpenAi';
import { tempDir } from '../../helpers/tmp';
import { ciRay, ciServices, rayRest } from '../jobs/helpers';
import { importPool, poolFiles } from './pool';

// A regret sweep from the app's API with a served model whose server wants an API key (the
// stand-in OpenAI server, made to answer 401 without `Authorization: Bearer KEY`): without the key
// the sweep fails in words before any episode; with the session's secret it plays, the key sent as
// a bearer token. The key is in no file of the data dir (the SQLite file read as bytes), and a sweep
// through the real Slurm or on the real Ray head of .ci/run ships only the secret's name: no file
// the job was given, no job spec and no log holds the key, and the node, which has no such
// variable, sends none.

type Sweep = EventPayload<'runs.sweepProgress'>;

const KEY = 'sk-standin-7f3a9c2e5b1d4086';
const WRONG = 'sk-standin-wrong-0b6e21d9';
const ci = ciServices();
const ray = ciRay();

let tmp: ReturnType<typeof tempDir>;
let server: StandIn;
let services: Services;
let api: Backend;
const heard: Sweep[] = [];

function ended(id: string, from: number): Promise<Sweep> {
  return new Promise((resolve) => {
    const check = () => {
      const s = heard.slice(from).find((x) => x.id === id && x.state !== 'running');
      if (s) {
        off();
        resolve(s);
      }
    };
    const off = api.on('runs.sweepProgress', check);
    check();
  });
}

/** Every file under a folder (the SQLite file, its WAL, logs...); sockets, pipes and links left out. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    const st = lstatSync(p);
    return st.isDirectory() ? filesUnder(p) : st.isFile() ? [p] : [];
  });
}

const model = () => ({ kind: 'model' as const, baseUrl: server.url, model: 'stand-in-keyed', maxTokens: 64 });

beforeAll(async () => {
  tmp = tempDir('spade-regret-key-');
  await importPool(tmp.dir, poolFiles(3));
  server = await startStandIn(() => ({ content: 'I say \\boxed{1}' }), { apiKey: KEY });
  services = new Services({ dataDir: tmp.dir, shell: 'in-process' });
  api = createInProcessBackend(createDispatcher(createHandlers(services)), services.events);
  api.on('runs.sweepProgress', (p) => heard.push(p));
}, 60_000);

afterAll(async () => {
  api?.close();
  await services?.close();
  await server?.close();
  tmp.cleanup();
});

describe('a regret sweep with a served model that needs an API key', () => {
  it('fails in words without the key, plays with the session secret sent as a bearer token, and keeps the key in no file', async () => {
    // No key named: the server's refusal ends the sweep before any episode, saying what to do.
    let mark = heard.length;
    const bare = await api.call('runs.sweepStart', { query: '', estimator: 'paired', seeds: 1, maxTurns: 2, policy: model() });
    const refused = await ended(bare.id, mark);
    expect(refused.state).toBe('failed');
    expect(refused.done).toBe(0);
    expect(refused.message).toContain(`The model server at ${server.url} refused the sweep (HTTP 401: Incorrect API key provided): it wants an API key`);
    expect(server.auth).toEqual([null]);

    // A secret named but not held in this session: refused at the start, nothing runs.
    const before = server.requests.length;
    await expect(api.call('runs.sweepStart', { query: '', estimator: 'paired', seeds: 1, maxTurns: 2, policy: { ...model(), apiKeySecret: 'STANDIN_API_KEY' } })).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringContaining('No secret named STANDIN_API_KEY is held in this session') });
    expect(server.requests.length).toBe(before);

    // The wrong key: refused in words, without repeating the key the server echoed.
    await api.call('jobs.setSecret', { name: 'STANDIN_API_KEY', value: WRONG });
    mark = heard.length;
    const wrong = await api.call('runs.sweepStart', { query: '', estimator: 'paired', seeds: 1, maxTurns: 2, policy: { ...model(), apiKeySecret: 'STANDIN_API_KEY' } });
    const refusedWrong = await ended(wrong.id, mark);
    expect(refusedWrong).toMatchObject({ state: 'failed', done: 0 });
    expect(refusedWrong.message).toBe(`The model server at ${server.url} refused the sweep (HTTP 401: Incorrect API key provided: [redacted]): it does not take the key held in secret STANDIN_API_KEY: set the right one in Episodes → Play with a model (key)`);
    expect(server.auth.at(-1)).toBe(`Bearer ${WRONG}`);
    // Kept with the sweep: listed later (after a restart of the app, too), it still says why it failed.
    for (const [id, why] of [[bare.id, refused.message], [wrong.id, refusedWrong.message]] as const) {
      expect((await api.call('runs.sweeps', { limit: 50 })).find((s) => s.id === id)).toMatchObject({ state: 'failed', message: why });
    }

    await api.call('jobs.setSecret', { name: 'STANDIN_API_KEY', value: KEY });
    mark = heard.length;
    const keyed = await api.call('runs.sweepStart', { query: '', estimator: 'paired', seeds: 1, maxTurns: 2, policy: { ...model(), apiKeySecret: 'STANDIN_API_KEY' } });
    expect(keyed.modelSettings).toMatchObject({ apiKeySecret: 'STANDIN_API_KEY', turnTimeoutSec: 300, retries: 4, temperature: 1, maxTokens: 64 });
    const end = await ended(keyed.id, mark);
    expect(end, end.message ?? '').toMatchObject({ state: 'done', done: 6, total: 6, failed: 0 });
    // Every request after the first refused one carried the key, and the episodes really talked to the server.
    expect(server.auth.length).toBeGreaterThan(8);
    expect(server.auth.slice(2).every((a) => a === `Bearer ${KEY}`)).toBe(true);
    // The run record names the secret, never its value.
    const run = await api.call('runs.get', { id: keyed.runId });
    expect(run.run.config.endpoint).toMatchObject({ apiKeyEnv: 'STANDIN_API_KEY' });
  }, 60_000);

  (ci?.slurm ? it : it.skip)('through the real Slurm: the job gets the secret name only, and the node without that variable sends no key', async () => {
    const at = new Date().toISOString();
    const ssh = { host: ci!.host, port: ci!.port, user: ci!.user, identityFile: ci!.key, knownHostsFile: ci!.knownHosts };
    // The record a Slurm launch from the Jobs page leaves: its SSH target is the saved host.
    new JobStore(services.db).insert({
      id: 'saved-slurm-host', name: 'earlier launch', backend: 'slurm', host: ci!.host, recipe: null,
      spec: { name: 'earlier launch', backend: 'slurm', command: ['true'], workdir: '/tmp', env: {}, secretEnv: [], ssh, outputs: {}, ship: [], importEnvironments: false },
      externalId: null, state: 'succeeded', detail: '', exitCode: 0, remoteLog: null, logOffset: 0, localLogSize: 0, metricsOffset: 0, createdAt: at, startedAt: at, finishedAt: at, updatedAt: at,
    });
    const sent = server.auth.length;
    const mark = heard.length;
    const started = await api.call('runs.sweepStart', { query: '', estimator: 'paired', seeds: 1, maxTurns: 2, policy: { ...model(), apiKeySecret: 'STANDIN_API_KEY', retries: 0 }, target: { kind: 'slurm', host: `${ci!.user}@${ci!.host}:${ci!.port}` } });
    const end = await ended(started.id, mark);
    // Each episode met the server's refusal: the node had no STANDIN_API_KEY, and nothing gave it the key.
    expect(end, end.message ?? '').toMatchObject({ state: 'done', done: 6, failed: 6 });
    expect(server.auth.length).toBeGreaterThan(sent);
    expect(server.auth.slice(sent).every((a) => a === null)).toBe(true);
    const report = await api.call('runs.sweepReport', { sweepId: started.id });
    expect(report.failed).toContain('6 of 6 episodes failed');
    // Each says why in words: the server's refusal, and where the node looked for the key.
    const errors = (services.db.prepare('SELECT result FROM sweep_results WHERE sweep_id = ?').all(started.id) as { result: string }[]).map((r) => (JSON.parse(r.result) as { error: string | null }).error);
    expect(errors).toHaveLength(6);
    for (const e of errors) expect(e).toContain('HTTP 401: Incorrect API key provided (the node sends the key from its own variable STANDIN_API_KEY; is it set there?)');

    // Every file the job was given (harness, items, config, the sbatch script) and all it wrote: the secret's name, never the key.
    const conn = new SshConnection(ssh, { appKnownHosts: join(tmp.dir, 'known_hosts') });
    try {
      const dir = `.spade_workbench/regrets/${started.id}`;
      const listed = await conn.exec(`cd && find ${dir} -type f | sort`);
      expect(listed.stdout).toContain('config.json');
      expect(listed.stdout).toContain('items.jsonl');
      expect(listed.stdout).toContain('regret.sbatch');
      expect((await conn.exec(`cd && cat ${dir}/*/config.json`)).stdout).toContain('"apiKeyEnv":"STANDIN_API_KEY"');
      const grep = await conn.exec(`cd && grep -rlF ${KEY} ${dir}; echo "exit $?"`);
      expect(grep.stdout.trim()).toBe('exit 1');
    } finally {
      conn.close();
    }
  }, 60_000);

  (ray ? it : it.skip)('on the real Ray head: neither the job, its package nor its logs hold the key', async () => {
    const sent = server.auth.length;
    const mark = heard.length;
    const started = await api.call('runs.sweepStart', { query: '', estimator: 'paired', seeds: 1, maxTurns: 2, policy: { ...model(), apiKeySecret: 'STANDIN_API_KEY', retries: 0 }, target: { kind: 'ray', address: new URL(ray!.address).host, python: join(ray!.bin, 'python') } });
    const end = await ended(started.id, mark);
    expect(end, end.message ?? '').toMatchObject({ state: 'done', done: 6, failed: 6 });
    expect(server.auth.slice(sent).every((a) => a === null)).toBe(true);

    // The job as Ray keeps it (entrypoint, runtime_env, metadata) and its log.
    const job = await rayRest(ray!.address, 'GET', `/api/jobs/spade_regret_${started.id}_0`);
    expect(job.status).toBe(200);
    const pkg = /gcs:\/\/(_ray_pkg_[0-9a-f]+)\.zip/.exec(job.text)?.[1];
    expect(pkg).toBeDefined();
    const logs = await rayRest(ray!.address, 'GET', `/api/jobs/spade_regret_${started.id}_0/logs`);
    expect(logs.text).toContain('@spade-audit-result');
    for (const text of [job.text, logs.text]) expect(text).not.toContain(KEY);
    // Nor the working_dir the head unpacked for the job and all it logged (its session folder: the head runs here).
    if (ray!.tmp) {
      const session = join(ray!.tmp, 'session_latest');
      expect(readFileSync(join(session, 'runtime_resources', 'working_dir_files', pkg!, 'input', 'config.json'), 'utf8')).toContain('"apiKeyEnv":"STANDIN_API_KEY"');
      expect(filesUnder(session).filter((f) => readFileSync(f).includes(KEY))).toEqual([]);
    }
  }, 60_000);

  it('leaves the key in no file of the data dir: not in the SQLite file, its WAL, or a log', async () => {
    // Written out: the WAL folded into the database file.
    services.db.pragma('wal_checkpoint(TRUNCATE)');
    const stored = services.db.prepare("SELECT options FROM sweeps WHERE kind = 'regret'").all() as { options: string }[];
    expect(stored.some((r) => r.options.includes('"apiKeyEnv":"STANDIN_API_KEY"'))).toBe(true);
    const files = filesUnder(tmp.dir);
    expect(files.some((f) => f.endsWith('workbench.sqlite'))).toBe(true);
    expect(files.filter((f) => readFileSync(f).includes(KEY) || readFileSync(f).includes(WRONG))).toEqual([]);
  });
});
