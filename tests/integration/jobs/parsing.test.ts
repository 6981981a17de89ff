import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { decodeWaitStatus, mapSlurmState, parseScontrol, parseSqueueJson, sbatchTemplate, SLURM_STATES, SlurmBackend } from '../../../core/jobs/backends/slurm';
import { renderSbatch } from '../../../core/jobs/script';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JobRecord, Transport } from '../../../core/jobs/types';
import { completeLines } from '../../../core/jobs/logMirror';
import { parseLogText, parseMetricLine } from '../../../core/jobs/metrics';
import { shJoin, shQuote } from '../../../core/jobs/shell';
import { resolveSshConfig } from '../../../core/jobs/ssh/config';

describe('job parsing', () => {
  it('maps every Slurm state the issue names', () => {
    const want: Record<string, string> = {
      PENDING: 'pending', RUNNING: 'running', SUSPENDED: 'suspended', COMPLETED: 'succeeded', CANCELLED: 'cancelled', FAILED: 'failed',
      TIMEOUT: 'timeout', NODE_FAIL: 'failed', PREEMPTED: 'cancelled', BOOT_FAIL: 'failed', DEADLINE: 'timeout', OUT_OF_MEMORY: 'failed',
    };
    for (const [k, v] of Object.entries(want)) expect([k, mapSlurmState(k)]).toEqual([k, v]);
    expect(mapSlurmState('CANCELLED by 0')).toBe('cancelled');
    expect(Object.keys(SLURM_STATES).length).toBeGreaterThanOrEqual(12);
  });

  it('reads squeue --json in both the string and the list form, and scontrol text', () => {
    expect(parseSqueueJson('{"jobs":[{"job_id":7,"job_state":"RUNNING","state_reason":"None","exit_code":0}]}', '7')).toEqual({ state: 'RUNNING', reason: 'None', exitCode: null });
    expect(parseSqueueJson('{"jobs":[{"job_id":7,"job_state":["PENDING"],"state_reason":"Resources","exit_code":{"return_code":{"number":0}}}]}', '7')?.state).toBe('PENDING');
    expect(parseSqueueJson('{"jobs":[]}', '7')).toBeNull();
    expect(parseScontrol('JobId=7 JobName=x\n   JobState=TIMEOUT Reason=TimeLimit Dependency=(null)\n   ExitCode=0:15')).toEqual({ state: 'TIMEOUT', reason: 'TimeLimit', exitCode: 0 });
  });

  it('decodes Slurm 22.05 wait statuses, and reads every job from one squeue --json', async () => {
    expect(decodeWaitStatus(768)).toEqual({ exitCode: 3, signal: null });
    expect(decodeWaitStatus(0)).toEqual({ exitCode: 0, signal: null });
    expect(decodeWaitStatus(9)).toEqual({ exitCode: 137, signal: 9 });
    const queue = JSON.stringify({
      jobs: [
        { job_id: 7, job_state: 'FAILED', state_reason: 'NonZeroExitCode', exit_code: 768 },
        { job_id: 8, job_state: 'RUNNING', state_reason: 'None', exit_code: 0 },
        { job_id: 9, job_state: ['COMPLETED'], exit_code: { return_code: { number: 0 } } },
      ],
    });
    expect(parseSqueueJson(queue, '7')).toEqual({ state: 'FAILED', reason: 'NonZeroExitCode', exitCode: 3 });
    // 0 means nothing while a job runs.
    expect(parseSqueueJson(queue, '8')?.exitCode).toBeNull();
    expect(parseSqueueJson(queue, '9')?.exitCode).toBe(0);
    // Three jobs on one host: one squeue between them.
    const ran: string[] = [];
    const t = {
      label: 'fake-host',
      exec: (cmd: string) => {
        ran.push(cmd);
        return Promise.resolve({ code: 0, stdout: queue, stderr: '' });
      },
    } as unknown as Transport;
    const slurm = new SlurmBackend(() => Promise.resolve(t));
    const job = (id: string) => ({ externalId: id, spec: { workdir: '/w' } }) as unknown as JobRecord;
    const states = await Promise.all(['7', '8', '9'].map((id) => slurm.status(job(id))));
    expect(states.map((s) => [s.state, s.exitCode])).toEqual([['failed', 3], ['running', null], ['succeeded', 0]]);
    expect(ran.filter((c) => c.startsWith('squeue'))).toEqual(['squeue --json 2>/dev/null']);
  });

  it("renders the sbatch with SPADE's container launch: binds, caches, Ray's temp dir, an editable install, no secret on a command line", () => {
    const dir = mkdtempSync(join(tmpdir(), 'spade-sbatch-'));
    try {
      const job = {
        id: 'jtest1',
        name: 'spade 8b',
        spec: {
          command: ['bash', 'cmd/games/train_spade_8b.sh', "it's"],
          env: { OUTPUT_DIR: '{{JOB_DIR}}/run', MODEL_ROOT: join(dir, 'models'), CORPUS_FILE: join(dir, 'corpus', 'games.jsonl') },
          slurm: { gpus: 8, cpusPerTask: 64, mem: '1900G', gres: 'gpu:h100:8', time: '48:00:00', container: join(dir, 'slime.sif') },
        },
      } as unknown as JobRecord;
      const paths = { workdir: join(dir, 'spade'), jobDir: join(dir, 'spade', '.spade_workbench', 'jtest1'), script: '', log: '', exitFile: join(dir, 'exit_code') };
      const text = renderSbatch(sbatchTemplate(), job, paths);
      expect(text).toMatch(/#SBATCH --gpus=8\n#SBATCH --gres=gpu:h100:8\n#SBATCH --time=48:00:00\n#SBATCH --cpus-per-task=64\n#SBATCH --mem=1900G/);
      // Run it with a stand-in `apptainer` that records its argv and environment, then runs the command.
      mkdirSync(join(dir, 'bin'));
      mkdirSync(join(dir, 'spade', 'cmd', 'games'), { recursive: true });
      mkdirSync(paths.jobDir, { recursive: true });
      writeFileSync(join(dir, 'spade', 'cmd', 'games', 'train_spade_8b.sh'), 'echo "trainer ran with $1 in $OUTPUT_DIR"\n');
      writeFileSync(join(dir, 'bin', 'apptainer'), `#!/bin/sh\nprintf '%s\\n' "$@" > ${join(dir, 'argv')}\nenv > ${join(dir, 'env')}\nwhile [ "$1" != ${join(dir, 'slime.sif')} ]; do shift; done; shift\ncd ${join(dir, 'spade')} && exec "$@"\n`, { mode: 0o755 });
      writeFileSync(join(dir, 'job.sbatch'), text);
      mkdirSync(join(dir, 'spade'), { recursive: true });
      const out = execFileSync('/bin/bash', [join(dir, 'job.sbatch')], { cwd: dir, env: { PATH: `${join(dir, 'bin')}:/usr/bin:/bin`, WANDB_API_KEY: 'k-secret-1' }, encoding: 'utf8' });
      expect(out).toContain(`trainer ran with it's in ${paths.jobDir}/run`);
      const argv = readFileSync(join(dir, 'argv'), 'utf8').split('\n');
      expect(argv.slice(0, 2)).toEqual(['exec', '--nv']);
      for (const b of [`${paths.workdir}:/workspace`, `${paths.jobDir}:${paths.jobDir}`, `${join(dir, 'models')}:${join(dir, 'models')}:ro`, `${join(dir, 'corpus')}:${join(dir, 'corpus')}:ro`]) expect(argv).toContain(b);
      expect(argv.join(' ')).toContain('pip install --no-deps -e /workspace');
      expect(argv.join(' ')).not.toContain('k-secret-1');
      const env = readFileSync(join(dir, 'env'), 'utf8');
      for (const v of ['PIP_BREAK_SYSTEM_PACKAGES=1', 'RAY_TMPDIR=/tmp', 'PYTHONPATH=/workspace', `HF_HOME=${paths.jobDir}/cache/hf`, `TRITON_CACHE_DIR=${paths.jobDir}/cache/triton`, 'WANDB_API_KEY=k-secret-1']) {
        expect(env).toContain(v);
      }
      expect(readFileSync(join(dir, 'exit_code'), 'utf8').trim()).toBe('0');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("finds the compute node a Slurm job's Ray head runs on, unless it is the submit host", async () => {
    const reply = (batchHost: string, self: string) =>
      ({ label: 'fake', exec: () => Promise.resolve({ code: 0, stdout: `JobId=5 JobName=x\n   JobState=RUNNING Reason=None\n   BatchHost=${batchHost}\n@@host ${self}\n`, stderr: '' }) }) as unknown as Transport;
    const job = { externalId: '5', spec: { workdir: '/w' } } as unknown as JobRecord;
    expect(await new SlurmBackend(() => Promise.resolve(reply('gpu-node-7', 'login1'))).rayHeadHost(job)).toBe('gpu-node-7');
    expect(await new SlurmBackend(() => Promise.resolve(reply('vm', 'vm'))).rayHeadHost(job)).toBeNull();
    expect(await new SlurmBackend(() => Promise.resolve(reply('x;rm', 'login1'))).rayHeadHost(job)).toBeNull();
  });

  it('takes only whole lines, so the next read starts exactly after the last one', () => {
    expect(completeLines(Buffer.from('a\nb\npartial'), false, false)).toMatchObject({ consumed: 4 });
    expect(completeLines(Buffer.from('partial'), false, false).consumed).toBe(0);
    expect(completeLines(Buffer.from('last'), true, false)).toMatchObject({ consumed: 4, addNewline: true });
  });

  it('finds SPADE metric lines and ignores plain text', () => {
    expect(parseMetricLine('{"rollout/step": 3, "env/avg_regret": 0.25, "note": "x"}')).toEqual([{ axis: 'rollout/step', step: 3, key: 'env/avg_regret', value: 0.25 }]);
    expect(parseMetricLine('2026-01-01 metrics: {"step": 1, "loss": 2}')).toEqual([{ axis: 'step', step: 1, key: 'loss', value: 2 }]);
    expect(parseMetricLine('rollout 3: game r_hint=1.0')).toEqual([]);
    expect(parseMetricLine('{"rollout/step": "x", "a": 1}')).toEqual([]);
  });

  it("reads Slime's printed Python dicts as metrics, safely, keyed by their own step key or the id", () => {
    // As Slime's logger prints them: a prefix, single quotes, numpy 2 scalar reprs, nan, booleans.
    const line = "[2026-01-02 03:04:05] data.py:206 - rollout 7: {'rollout/log_probs': 0.5, 'env/avg_regret': np.float64(0.125), 'rollout/num_failed': 2, 'env/skill_Logical_Deduction/r_hint': 1e-3, 'ok': True, 'bad': nan, 'name': 'x, y: {z}', 'raw': [1, 2]}";
    const r = (step: number, key: string, value: number) => ({ axis: 'rollout/step', step, key, value });
    expect(parseMetricLine(line)).toEqual([r(7, 'rollout/log_probs', 0.5), r(7, 'env/avg_regret', 0.125), r(7, 'rollout/num_failed', 2), r(7, 'env/skill_Logical_Deduction/r_hint', 0.001), r(7, 'ok', 1)]);
    // rollout/step in the dict wins over the id and is not itself a series.
    expect(parseMetricLine("rollout 3: {'rollout/step': 12, 'rollout/actor_win_rate': -0.25, 'perf/t': tensor(1.5, device='cuda:0')}")).toEqual([r(12, 'rollout/actor_win_rate', -0.25), r(12, 'perf/t', 1.5)]);
    // Data only: a call that is not a scalar wrapper loses that value (never run), the rest stays.
    expect(parseMetricLine("perf 1: {'a': __import__('os').system('touch /tmp/pwned'), 'b': 1}")).toEqual([r(1, 'b', 1)]);
    expect(parseMetricLine('rollout 3: game_00003_000_pattern_recognition r_hint=1.000')).toEqual([]);
    expect(parseMetricLine("rollout 2: {'x': -inf, 'y': 3}")).toEqual([r(2, 'y', 3)]);
  });

  it('reads metrics.jsonl lines (Tinker) keyed by step', () => {
    expect(parseLogText('{"step": 1, "env/avg_regret": 0.5, "optim/lr": 1e-6}\n{"step": 2, "env/avg_regret": 0.25}\n').points).toEqual([
      { axis: 'step', step: 1, key: 'env/avg_regret', value: 0.5 },
      { axis: 'step', step: 1, key: 'optim/lr', value: 1e-6 },
      { axis: 'step', step: 2, key: 'env/avg_regret', value: 0.25 },
    ]);
  });

  it('quotes every value so /bin/sh gives back exactly what went in', () => {
    const hostile = ["a'b", '$(id)', '`id`', 'x\ny', ' spaced ', '', '"q"', '\\', '*', ';rm -rf /;'];
    const out = execFileSync('/bin/sh', ['-c', `printf '%s\\0' ${shJoin(hostile)}`]).toString('utf8').split('\0').slice(0, -1);
    expect(out).toEqual(hostile);
    expect(() => shQuote('a\0b')).toThrow();
  });

  it('resolves hosts from an ssh config with first-match-wins', () => {
    const cfg = 'Host gpu*\n  User alice\n  Port 2200\nHost gpu1\n  HostName 10.0.0.5\n  User bob\n  IdentityFile ~/.ssh/gpu_key\nHost *\n  User fallback\n';
    const r = resolveSshConfig(cfg, 'gpu1');
    expect(r).toMatchObject({ hostName: '10.0.0.5', user: 'alice', port: 2200 });
    expect(r.identityFiles[0]).toMatch(/\.ssh\/gpu_key$/);
    expect(resolveSshConfig(cfg, 'other').user).toBe('fallback');
  });
});
