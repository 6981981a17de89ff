import { randomBytes, createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSpec, type LaunchRequest } from '../../../core/jobs/launch';
import { MemorySecretStore } from '../../../core/jobs/secrets';
import type { JobRecord } from '../../../core/jobs/types';
import { tempDir } from '../../helpers/tmp';
import { ciServices, makeManager, waitState } from './helpers';

/**
 * SPADE's Tinker launchers (cmd/tinker/*\/train_spade_tinker.sh at 9b2b813, copied unchanged from a SPADE
 * checkout: SPADE_SRC) launched through their recipes as local jobs, against a stand-in trainer
 * (tinker-standin/train_spade_tinker.py, which says so at its top) that asks about an existing log folder
 * and refuses an argument SpadeConfig lacks, as SPADE's does. A stand-in `pip` keeps the launcher's
 * `pip install` off the network.
 */
const SPADE_SRC = process.env.SPADE_SRC ?? '/work/spade-src';
const HAVE_SPADE = existsSync(join(SPADE_SRC, 'cmd', 'tinker', 'qwen3_8b', 'train_spade_tinker.sh')) && existsSync(join(SPADE_SRC, 'train_spade_tinker.py'));
const ENDED: JobRecord['state'][] = ['succeeded', 'failed', 'lost', 'cancelled'];
const ci = ciServices();
const LAUNCHERS = ['gpt_oss_20b', 'qwen3_30b_instruct', 'qwen3_4b_instruct', 'qwen3_8b', 'qwen3_8b_base'];

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p).map((f) => join(n, f)));
    else out.push(n);
  }
  return out.sort();
}

(HAVE_SPADE ? describe : describe.skip)("SPADE's Tinker launchers as workbench jobs", () => {
  let tmp: ReturnType<typeof tempDir>;
  let ctx: ReturnType<typeof makeManager>;
  let checkout: string;
  let workspace: string;
  let bin: string;
  const KEY = `tinker-${randomBytes(12).toString('hex')}`;

  const request = (recipe: string, extra: Partial<LaunchRequest> = {}): LaunchRequest => ({
    name: recipe,
    backend: 'local',
    recipe,
    workdir: checkout,
    secretEnv: ['TINKER_API_KEY'],
    poolDir: null,
    importEnvironments: false,
    ...extra,
    env: { WANDB_ENTITY: 'ci-team', WORKSPACE_DIR: workspace, STANDIN_SPADE_SRC: SPADE_SRC, PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`, ...extra.env },
  });
  const standin = (job: JobRecord): { args: string[]; key_sha256: string } => JSON.parse(readFileSync(join(checkout, '.spade_workbench', job.id, 'run', 'standin.json'), 'utf8')) as { args: string[]; key_sha256: string };
  const log = (job: JobRecord): string => readFileSync(join(checkout, '.spade_workbench', job.id, 'job.log'), 'utf8');

  beforeAll(() => {
    tmp = tempDir('spade-jobs-tinker-');
    checkout = join(tmp.dir, 'spade');
    mkdirSync(join(checkout, 'cmd'), { recursive: true });
    cpSync(join(SPADE_SRC, 'cmd', 'tinker'), join(checkout, 'cmd', 'tinker'), { recursive: true });
    cpSync(join(__dirname, 'tinker-standin', 'train_spade_tinker.py'), join(checkout, 'train_spade_tinker.py'));
    // The AIME files the 4b/30b/gpt-oss launchers look for under WORKSPACE_DIR, 2026's included: with
    // it present SPADE's launcher passes aime_2026_path=, which SpadeConfig refuses.
    workspace = join(tmp.dir, 'ws');
    for (const y of ['2024', '2025', '2026']) {
      mkdirSync(join(workspace, `aime-${y}`), { recursive: true });
      writeFileSync(join(workspace, `aime-${y}`, `aime-${y}.jsonl`), '{"problem": "1+1", "answer": "2"}\n');
    }
    bin = join(tmp.dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'pip'), '#!/bin/sh\n# Stand-in pip for the test: the launcher\'s `pip install math_verify weave` installs nothing.\necho "stand-in pip: $*"\n');
    chmodSync(join(bin, 'pip'), 0o755);
    const secrets = new MemorySecretStore();
    secrets.set('TINKER_API_KEY', KEY);
    ctx = makeManager(tmp.dir, { secrets });
  });
  afterAll(async () => {
    await ctx.manager.close();
    ctx.db.close();
    tmp.cleanup();
  });

  it('each launcher runs unattended: the key arrives as a secret only, the AIME 2026 argument is kept out, the log-folder prompt is answered, metrics.jsonl is charted', async () => {
    const jobs = await Promise.all(LAUNCHERS.map((d) => ctx.manager.submit(buildSpec(request(`spade-tinker-${d.replace(/_/g, '-')}`)))));
    for (const [i, job] of jobs.entries()) {
      const done = await waitState(ctx.manager, job.id, ENDED, 120_000);
      const text = log(done);
      expect(done.state, `${LAUNCHERS[i]}: ${done.detail}\n${text.slice(-2000)}`).toBe('succeeded');
      const seen = standin(done);
      // The key reached the trainer's environment (its hash), and nowhere else.
      expect(seen.key_sha256).toBe(createHash('sha256').update(KEY).digest('hex'));
      expect(text).not.toContain(KEY);
      expect(readFileSync(join(checkout, '.spade_workbench', job.id, 'job.sh'), 'utf8')).not.toContain(KEY);
      expect(JSON.stringify(done.spec)).not.toContain(KEY);
      // The 4b/30b/gpt-oss launchers pass the 2024 and 2025 evaluations and not 2026's.
      if (LAUNCHERS[i]!.endsWith('instruct') || LAUNCHERS[i] === 'gpt_oss_20b') {
        expect(seen.args).toEqual(expect.arrayContaining(['aime_2024_path', 'aime_2025_path', 'eval_n_samples']));
        expect(seen.args).not.toContain('aime_2026_path');
      }
      // The 8B launchers make OUTPUT_DIR before the trainer, which then asks; the recipe answered.
      if (LAUNCHERS[i]!.startsWith('qwen3_8b')) expect(text).toContain('already exists. What do you want to do? [delete, resume, exit]');
      expect(seen.args).toContain('log_path');
      // Tinker's metrics.jsonl in the job's own folder, read into the job's charts on the `step` axis.
      const pts = ctx.manager.store.metrics(job.id, ['train/loss:sum', 'rollout/env_mean_return']);
      expect(pts.map((p) => [p.key, p.axis, p.step, p.value])).toEqual([
        ['rollout/env_mean_return', 'step', 0, 0],
        ['rollout/env_mean_return', 'step', 1, 0.25],
        ['rollout/env_mean_return', 'step', 2, 0.5],
        ['train/loss:sum', 'step', 0, 10],
        ['train/loss:sum', 'step', 1, 9],
        ['train/loss:sum', 'step', 2, 8],
      ]);
    }
    // The database holds no trace of the key (its file and write-ahead log read as bytes).
    ctx.db.pragma('wal_checkpoint(TRUNCATE)');
    for (const f of readdirSync(tmp.dir).filter((n) => n.startsWith('workbench.sqlite'))) expect(readFileSync(join(tmp.dir, f)).includes(Buffer.from(KEY)), f).toBe(false);
    // SPADE's files are as SPADE wrote them: every launcher byte for byte, nothing added under cmd/tinker.
    const ours = filesUnder(join(checkout, 'cmd', 'tinker'));
    expect(ours).toEqual(filesUnder(join(SPADE_SRC, 'cmd', 'tinker')));
    for (const f of ours) expect(readFileSync(join(checkout, 'cmd', 'tinker', f)).equals(readFileSync(join(SPADE_SRC, 'cmd', 'tinker', f))), f).toBe(true);
  });

  it('without the two fixes the same launchers fail: no answer (EOF at the prompt) and aime_2026_path refused', async () => {
    const spec8 = buildSpec(request('spade-tinker-qwen3-8b'));
    delete spec8.stdin;
    const spec4 = buildSpec(request('spade-tinker-qwen3-4b-instruct'));
    delete spec4.stdin;
    delete spec4.env['AIME_2026_PATH'];
    const j8 = await ctx.manager.submit({ ...spec8, name: 'no answer' });
    const j4 = await ctx.manager.submit({ ...spec4, name: 'aime 2026 passed' });
    const d8 = await waitState(ctx.manager, j8.id, ENDED, 120_000);
    const d4 = await waitState(ctx.manager, j4.id, ENDED, 120_000);
    expect(d8.state).toBe('failed');
    expect(log(d8)).toContain('EOFError');
    expect(d4.state).toBe('failed');
    expect(log(d4)).toContain("SpadeConfig declares no field 'aime_2026_path'");
  });

  (ci ? it : it.skip)('over SSH too (the CI sshd): the key travels on the SSH channel\'s input, the answer on the job\'s', async () => {
    const ssh = { host: ci!.host, port: ci!.port, user: ci!.user, identityFile: ci!.key, knownHostsFile: ci!.knownHosts };
    const job = await ctx.manager.submit(buildSpec(request('spade-tinker-qwen3-8b', { backend: 'ssh', ssh, name: 'tinker over ssh' })));
    const done = await waitState(ctx.manager, job.id, ENDED, 120_000);
    expect(done.state, `${done.detail}\n${log(done).slice(-2000)}`).toBe('succeeded');
    expect(standin(done).key_sha256).toBe(createHash('sha256').update(KEY).digest('hex'));
    expect(log(done)).toContain('already exists. What do you want to do?');
    expect(log(done)).not.toContain(KEY);
    expect(readFileSync(join(checkout, '.spade_workbench', job.id, 'job.sh'), 'utf8')).not.toContain(KEY);
    expect(ctx.manager.store.metrics(job.id, ['train/loss:sum']).map((p) => [p.axis, p.step, p.value])).toEqual([['step', 0, 10], ['step', 1, 9], ['step', 2, 8]]);
  });

  it('a launch that would undo the AIME fix or pass arguments is refused before anything runs', () => {
    expect(() => buildSpec(request('spade-tinker-gpt-oss-20b', { env: { AIME_2026_PATH: join(workspace, 'aime-2026', 'aime-2026.jsonl') } }))).toThrow(/sets AIME_2026_PATH itself and it cannot be changed/);
    expect(() => buildSpec(request('spade-tinker-qwen3-8b', { extraArgs: ['batch_size=8'] }))).toThrow(/never reads its arguments/);
    expect(() => buildSpec(request('spade-tinker-qwen3-8b', { secretEnv: [] }))).toThrow(/needs TINKER_API_KEY/);
  });
});
