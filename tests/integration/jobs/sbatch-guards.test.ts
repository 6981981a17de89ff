import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sbatchTemplate } from '../../../core/jobs/backends/slurm';
import { buildSpec } from '../../../core/jobs/launch';
import { MemorySecretStore } from '../../../core/jobs/secrets';
import { renderSbatch } from '../../../core/jobs/script';
import type { JobRecord } from '../../../core/jobs/types';
import { tempDir } from '../../helpers/tmp';
import { ciServices, makeManager, waitState } from './helpers';

/**
 * SPADE's sbatch guards (slurm/train_spade_slurm_apptainer.sbatch:69-73 and :99 at 9b2b813) run before
 * SPADE's script, whose first act is to kill the node's sglang and ray processes. The stand-in script
 * here records that "kill" as a file, then reads slime's model file and WORKSPACE_DIR as SPADE's do.
 */
const GITMODULES = '[submodule "slime"]\n\tpath = slime\n\turl = https://github.com/THUDM/slime.git\n';
const STANDIN = 'touch "$KILL_MARKER"  # stands in for: pkill -9 sglang; ray stop --force; pkill -9 ray\nsource slime/scripts/models/qwen3-4B-Instruct-2507.sh\necho "trainer ran; WORKSPACE_DIR=${WORKSPACE_DIR:-/mnt/spade-workspace}"\n';

function checkout(dir: string, opts: { gitmodules: string | null; slime: 'absent' | 'empty' | 'initialised' }): string {
  const co = join(dir, 'spade');
  mkdirSync(join(co, 'cmd', 'games'), { recursive: true });
  writeFileSync(join(co, 'cmd', 'games', 'train_spade_4b.sh'), STANDIN);
  if (opts.gitmodules !== null) writeFileSync(join(co, '.gitmodules'), opts.gitmodules);
  // An uninitialised submodule is an empty folder in a clone.
  if (opts.slime !== 'absent') mkdirSync(join(co, 'slime'), { recursive: true });
  if (opts.slime === 'initialised') {
    mkdirSync(join(co, 'slime', 'scripts', 'models'), { recursive: true });
    writeFileSync(join(co, 'slime', 'scripts', 'models', 'qwen3-4B-Instruct-2507.sh'), 'MODEL_ARGS=(--stand-in)\n');
  }
  return co;
}

function runRendered(dir: string, co: string, env: Record<string, string> = {}): { status: number | null; out: string; killed: boolean; exitFile: string; jobDir: string } {
  const jobDir = join(co, '.spade_workbench', 'jguard');
  mkdirSync(jobDir, { recursive: true });
  const job = { id: 'jguard', name: 'spade 4b', spec: { command: ['bash', 'cmd/games/train_spade_4b.sh'], env, slurm: {} } } as unknown as JobRecord;
  const paths = { workdir: co, jobDir, script: '', log: '', exitFile: join(jobDir, 'exit_code') };
  writeFileSync(join(dir, 'job.sbatch'), renderSbatch(sbatchTemplate(), job, paths));
  const marker = join(dir, 'killed');
  const r = spawnSync('/bin/bash', [join(dir, 'job.sbatch')], { cwd: dir, env: { PATH: '/usr/bin:/bin', KILL_MARKER: marker }, encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr, killed: existsSync(marker), exitFile: existsSync(paths.exitFile) ? readFileSync(paths.exitFile, 'utf8').trim() : '', jobDir };
}

describe("the sbatch template's SPADE guards (rendered and run with bash)", () => {
  it('refuses a SPADE checkout whose slime submodule is not initialised before the script kills anything', () => {
    for (const slime of ['absent', 'empty'] as const) {
      const tmp = tempDir('spade-guard-');
      try {
        const r = runRendered(tmp.dir, checkout(tmp.dir, { gitmodules: GITMODULES, slime }));
        expect(r.status, r.out).toBe(2);
        expect(r.out).toContain('slime submodule not initialised');
        expect(r.out).toContain('git submodule update --init --recursive');
        expect(r.killed).toBe(false);
        // The workbench reads the outcome from the exit file: the refusal is recorded, not "lost".
        expect(r.exitFile).toBe('2');
      } finally {
        tmp.cleanup();
      }
    }
  });

  it("runs an initialised checkout, with WORKSPACE_DIR the job's folder unless the job sets it", () => {
    const tmp = tempDir('spade-guard-');
    try {
      const co = checkout(tmp.dir, { gitmodules: GITMODULES, slime: 'initialised' });
      const r = runRendered(tmp.dir, co);
      expect(r.status, r.out).toBe(0);
      expect(r.killed).toBe(true);
      expect(r.out).toContain(`trainer ran; WORKSPACE_DIR=${r.jobDir}`);
      const own = runRendered(tmp.dir, co, { WORKSPACE_DIR: '/data/spade workspace' });
      expect(own.out).toContain('trainer ran; WORKSPACE_DIR=/data/spade workspace');
    } finally {
      tmp.cleanup();
    }
  });

  it('leaves a folder that is not a SPADE checkout alone (no .gitmodules, or one that names another submodule)', () => {
    for (const gitmodules of [null, '[submodule "slime-docs"]\n\tpath = slime-docs\n\turl = x\n']) {
      const tmp = tempDir('spade-guard-');
      try {
        const co = checkout(tmp.dir, { gitmodules, slime: 'absent' });
        writeFileSync(join(co, 'cmd', 'games', 'train_spade_4b.sh'), 'touch "$KILL_MARKER"\necho "ran; WORKSPACE_DIR=${WORKSPACE_DIR:-unset}"\n');
        const r = runRendered(tmp.dir, co);
        expect(r.status, r.out).toBe(0);
        expect(r.killed).toBe(true);
        expect(r.out).toContain('ran; WORKSPACE_DIR=unset');
      } finally {
        tmp.cleanup();
      }
    }
  });
});

const ci = ciServices();
(ci ? describe : describe.skip)('the SPADE 4B games recipe on the real Slurm, slime not initialised', () => {
  it('fails with the guard\'s message and the script never starts', async () => {
    const tmp = tempDir('spade-guard-slurm-');
    const secrets = new MemorySecretStore();
    secrets.set('WANDB_API_KEY', 'wandb-guard-test');
    const ctx = makeManager(tmp.dir, { secrets });
    try {
      const co = checkout(tmp.dir, { gitmodules: GITMODULES, slime: 'empty' });
      const marker = join(tmp.dir, 'killed');
      const spec = buildSpec({
        name: 'spade 4b without slime',
        backend: 'slurm',
        recipe: 'spade-games-4b',
        ssh: { host: ci!.host, port: ci!.port, user: ci!.user, identityFile: ci!.key, knownHostsFile: ci!.knownHosts },
        // The CI cluster has no GPUs and little memory: the recipe's 8 GPUs and 1900G would never be scheduled.
        slurm: { gpus: 0, cpusPerTask: 1, mem: '100M', time: '00:05:00' },
        workdir: co,
        secretEnv: ['WANDB_API_KEY'],
        poolDir: null,
        importEnvironments: false,
        env: { WANDB_ENTITY: 'ci-team', CORPUS_FILE: '', KILL_MARKER: marker },
      });
      const job = await ctx.manager.submit({ ...spec, ray: undefined });
      const done = await waitState(ctx.manager, job.id, ['succeeded', 'failed', 'lost', 'cancelled'], 120_000);
      expect(done.state, done.detail).toBe('failed');
      expect(job.externalId).toMatch(/^\d+$/);
      const log = ctx.manager.readLog(job.id, 0, 1 << 20).text;
      expect(log).toMatch(/slurm job \d+ on /);
      expect(log).toContain('slime submodule not initialised');
      expect(existsSync(marker)).toBe(false);
    } finally {
      await ctx.manager.close();
      ctx.db.close();
      tmp.cleanup();
    }
  }, 180_000);
});
