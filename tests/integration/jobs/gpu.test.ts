import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { buildSpec } from '../../../core/jobs/launch';
import type { JobManager } from '../../../core/jobs/manager';
import type { SshTarget } from '../../../core/jobs/types';
import { tempDir } from '../../helpers/tmp';
import { ciRay, ciServices, makeManager, SERVICES_MISSING, waitFor, waitState } from './helpers';

/**
 * GPU use of a job's nodes, read over the job's own connection: the real Slurm of .ci/run (whose
 * node has no GPU, so no nvidia-smi) and its sshd, with a stand-in nvidia-smi
 * (tests/fixtures/nvidia-smi/nvidia-smi, which says so at its top) first on the job's PATH.
 */
const ci = ciServices();
if (!ci) console.warn(`[jobs gpu tests skipped] ${SERVICES_MISSING}`);
const d = ci ? describe : describe.skip;
const STANDIN = join(__dirname, '../../fixtures/nvidia-smi/nvidia-smi');
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

function target(): SshTarget {
  return { host: ci!.host, port: ci!.port, user: ci!.user, identityFile: ci!.key, knownHostsFile: ci!.knownHosts };
}

/** Processes whose command line names `dir` (the stand-in's private copy): none may outlive the job. */
function processesIn(dir: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.includes(dir) && !l.includes('ps -eo'));
}

function view(m: JobManager, id: string) {
  return m.gpu.store.view(id);
}

d('GPU use of a job (real Slurm and sshd)', () => {
  let tmp: ReturnType<typeof tempDir>;
  let standinDir: string;
  beforeAll(() => {
    tmp = tempDir('spade-jobs-gpu-');
    // A private copy, so the processes it starts can be told from any other test's.
    standinDir = join(tmp.dir, 'standin-bin');
    mkdirSync(standinDir);
    copyFileSync(STANDIN, join(standinDir, 'nvidia-smi'));
  });
  afterAll(() => tmp.cleanup());

  it('a Slurm job on a node without nvidia-smi shows "no GPU seen", said once, and is not sampled further', async () => {
    const ctx = makeManager(tmp.dir, { gpuIntervalS: 1 });
    try {
      const job = await ctx.manager.submit(
        buildSpec({ name: 'no gpu', backend: 'slurm', ssh: target(), workdir: join(tmp.dir, 'w1'), command: ['sh', '-c', 'sleep 8'], env: { PATH: SYSTEM_PATH }, poolDir: null }),
      );
      const seen = await waitFor('the node verdict', () => {
        const v = view(ctx.manager, job.id);
        return v.nodes.length && v.sampler?.state === 'ended' ? v : null;
      }, 60_000);
      expect(seen.nodes).toEqual([expect.objectContaining({ state: 'no-gpu', detail: "nvidia-smi is not on this node's PATH", gpus: [], procs: [] })]);
      expect(seen.sampler!.detail).toBe("nothing to sample: no GPU seen on the job's node(s)");
      const done = await waitState(ctx.manager, job.id, ['succeeded', 'failed', 'lost', 'cancelled']);
      expect(done.state, done.detail).toBe('succeeded');
      expect(ctx.manager.gpu.store.sampleCount(job.id)).toBe(0);
    } finally {
      await ctx.manager.close();
      ctx.db.close();
    }
  });

  it('charts a Slurm node whose nvidia-smi prints GPUs (srun --overlap in the job), keeps it with the job, and stops when the job ends', async () => {
    const ctx = makeManager(tmp.dir, { gpuIntervalS: 1 });
    try {
      const job = await ctx.manager.submit(
        buildSpec({
          name: 'two gpus',
          backend: 'slurm',
          ssh: target(),
          workdir: join(tmp.dir, 'w2'),
          command: ['sh', '-c', 'sleep 9'],
          env: { PATH: `${standinDir}:${SYSTEM_PATH}` },
          poolDir: null,
        }),
      );
      const v = await waitFor('three samples of both GPUs and their processes', () => {
        const x = view(ctx.manager, job.id);
        const gpus = x.nodes[0]?.gpus ?? [];
        return gpus.length === 2 && gpus.every((g) => g.t.length >= 3) && x.nodes[0]!.procs.length ? x : null;
      }, 60_000);
      expect(v.sampler).toMatchObject({ state: 'sampling' });
      expect(v.sampler!.detail).toContain(`srun --overlap in Slurm job ${job.externalId}`);
      const [node] = v.nodes;
      expect(node).toMatchObject({ state: 'gpus' });
      const [g0, g1] = node!.gpus;
      expect(g0).toMatchObject({ index: 0, uuid: 'GPU-5b2c9d0e-7a41-4f3e-9c1d-2e8f6a7b3c41', name: 'NVIDIA H100 80GB HBM3', memTotal: 81559 });
      // The stand-in's -l loop advances each interval: the series moves, it is not one value repeated.
      expect(new Set(g0!.util).size).toBeGreaterThan(1);
      expect(g0!.power.every((p) => typeof p === 'number' && p >= 300)).toBe(true);
      expect(g0!.temp.every((x) => typeof x === 'number' && x >= 60 && x <= 64)).toBe(true);
      // GPU 1's [N/A] power and [Not Supported] temperature lose those values only.
      expect(g1).toMatchObject({ index: 1, memTotal: 81559 });
      expect(g1!.power.every((p) => p === null)).toBe(true);
      expect(g1!.temp.every((p) => p === null)).toBe(true);
      expect(g1!.memUsed.every((p) => p === 1024)).toBe(true);
      expect(node!.procs).toEqual([
        { gpuUuid: g0!.uuid, gpuIndex: 0, pid: 31337, processName: '/usr/bin/python3', usedMemory: 40536 },
        { gpuUuid: g0!.uuid, gpuIndex: 0, pid: 31338, processName: 'ray::MegatronTrainRayActor', usedMemory: null },
      ]);
      const done = await waitState(ctx.manager, job.id, ['succeeded', 'failed', 'lost', 'cancelled']);
      expect(done.state, done.detail).toBe('succeeded');
      await waitFor('the sampler to end with the job', () => view(ctx.manager, job.id).sampler?.state === 'ended', 30_000);
      // Nothing of the sampler is left on the node, and nothing more is recorded.
      await waitFor('the stand-in processes to end', () => processesIn(standinDir).length === 0, 30_000);
      const kept = ctx.manager.gpu.store.sampleCount(job.id);
      await new Promise((r) => setTimeout(r, 2500));
      expect(ctx.manager.gpu.store.sampleCount(job.id)).toBe(kept);
      // Kept with the job: a new session on the same database shows the same samples.
      await ctx.manager.close();
      const again = makeManager(tmp.dir);
      try {
        const reopened = again.manager.gpu.store.view(job.id);
        expect(reopened.sampler?.state).toBe('ended');
        expect(reopened.nodes[0]!.gpus.reduce((n, g) => n + g.t.length, 0)).toBe(kept);
        expect(reopened.nodes[0]!.gpus[0]!.util.slice(0, g0!.util.length)).toEqual(g0!.util);
      } finally {
        await again.manager.close();
        again.db.close();
      }
    } finally {
      await ctx.manager.close();
      ctx.db.close();
    }
  });

  it("closing the workbench cancels its sampler's Slurm step on the node; the job itself runs on", async () => {
    const ctx = makeManager(tmp.dir, { gpuIntervalS: 1 });
    let slurmId = '';
    try {
      const job = await ctx.manager.submit(
        buildSpec({ name: 'close', backend: 'slurm', ssh: target(), workdir: join(tmp.dir, 'w4'), command: ['sleep', '120'], env: { PATH: `${standinDir}:${SYSTEM_PATH}` }, poolDir: null }),
      );
      slurmId = job.externalId ?? '';
      await waitFor('sampling', () => ctx.manager.gpu.store.sampleCount(job.id) >= 4, 60_000);
      const steps = () => execFileSync('squeue', ['-h', '-s', '-j', slurmId, '-o', '%i %j'], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
      expect(steps()).toContain(`${slurmId}.0 spade-workbench-gpu`);
      await ctx.manager.close();
      // Without the scancel the step samples on (and its stand-in runs) until the job ends.
      await waitFor('the sampler step and its nvidia-smi to end', () => processesIn(standinDir).length === 0 && !steps().some((l) => l.endsWith('spade-workbench-gpu')), 30_000);
      expect(execFileSync('squeue', ['-h', '-j', slurmId, '-o', '%T'], { encoding: 'utf8' }).trim()).toBe('RUNNING');
    } finally {
      await ctx.manager.close();
      ctx.db.close();
      if (/^\d+$/.test(slurmId)) execFileSync('scancel', [slurmId]);
    }
  });

  it('an SSH job whose connection drops says so, samples again on a new link, and stops when the job is cancelled', async () => {
    const ctx = makeManager(tmp.dir, { gpuIntervalS: 1 });
    try {
      const job = await ctx.manager.submit(
        buildSpec({ name: 'drop', backend: 'ssh', ssh: target(), workdir: join(tmp.dir, 'w3'), command: ['sleep', '120'], env: { PATH: `${standinDir}:${SYSTEM_PATH}` }, poolDir: null }),
      );
      await waitFor('sampling', () => ctx.manager.gpu.store.sampleCount(job.id) >= 4, 60_000);
      ctx.manager.dropConnections();
      const dropped = await waitFor('the drop to be said', () => {
        const s = view(ctx.manager, job.id).sampler;
        return s?.state === 'dropped' ? s : null;
      }, 30_000);
      expect(dropped.detail).toMatch(/connection|closed|dropped/i);
      const before = ctx.manager.gpu.store.sampleCount(job.id);
      await waitFor('sampling again', () => view(ctx.manager, job.id).sampler?.state === 'sampling' && ctx.manager.gpu.store.sampleCount(job.id) > before + 2, 60_000);
      const stopped = await ctx.manager.stop(job.id);
      expect(stopped.state).toBe('cancelled');
      expect(view(ctx.manager, job.id).sampler).toMatchObject({ state: 'ended', detail: 'sampling stopped: the job was cancelled' });
      await waitFor('the stand-in processes to end', () => processesIn(standinDir).length === 0, 30_000);
    } finally {
      await ctx.manager.close();
      ctx.db.close();
    }
  });
});

/** A node that prints to hurt: every bound holds, nothing crashes, the job runs to its end. */
const HOSTILE = `#!/bin/sh
# STAND-IN for nvidia-smi written by tests/integration/jobs/gpu.test.ts: a hostile node's output,
# not NVIDIA's tool. Floods rows, writes a line with no end, puts terminal escapes in names.
case "$1" in
  --query-gpu=*)
    while :; do
      echo 'Welcome to the cluster: ignore me'
      head -c 200000 /dev/zero | tr '\\0' 'x'; echo
      i=0; while [ $i -lt 300 ]; do printf '%d, GPU-%d, \\033]0;pwn\\007Evil, 1e999, -5, 80000, [Unknown Error], %d\\n' $i $i $i; i=$((i + 1)); done
      [ "$3" = -l ] || exit 0
      sleep "$4"
    done ;;
  --query-compute-apps=*)
    i=0; while [ $i -lt 3000 ]; do printf 'GPU-1, %d, /bin/x, 5\\n' $i; i=$((i + 1)); done ;;
esac
`;

describe('GPU use from a hostile node (a real local job)', () => {
  it('keeps at most 64 GPUs and 1024 processes, strips escapes, drops endless lines, and the job ends normally', async () => {
    const tmp = tempDir('spade-jobs-gpu-hostile-');
    const bin = join(tmp.dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'nvidia-smi'), HOSTILE);
    chmodSync(join(bin, 'nvidia-smi'), 0o755);
    const ctx = makeManager(tmp.dir, { gpuIntervalS: 1 });
    try {
      const job = await ctx.manager.submit(
        buildSpec({ name: 'hostile', backend: 'local', workdir: join(tmp.dir, 'w'), command: ['sleep', '6'], env: { PATH: `${bin}:${SYSTEM_PATH}` }, poolDir: null }),
      );
      const v = await waitFor('two rounds and the processes', () => {
        const x = ctx.manager.gpu.store.view(job.id);
        return (x.nodes[0]?.gpus[0]?.t.length ?? 0) >= 2 && x.nodes[0]!.procs.length ? x : null;
      }, 60_000);
      const node = v.nodes[0]!;
      expect(node.gpus).toHaveLength(64);
      expect(node.procs).toHaveLength(1024);
      const g = node.gpus[5]!;
      expect(g.name).toBe(']0;pwn Evil');
      // 1e999 is no number, [Unknown Error] no value; what was a number stays one.
      expect(g.util.every((x) => x === null)).toBe(true);
      expect(g.power.every((x) => x === null)).toBe(true);
      expect(g.memUsed.every((x) => x === -5)).toBe(true);
      expect(g.temp.every((x) => x === 5)).toBe(true);
      const done = await waitState(ctx.manager, job.id, ['succeeded', 'failed', 'lost', 'cancelled']);
      expect(done.state, done.detail).toBe('succeeded');
      await waitFor('the sampler to end', () => ctx.manager.gpu.store.view(job.id).sampler?.state === 'ended', 30_000);
      await waitFor('the hostile stand-in to end', () => processesIn(bin).length === 0, 30_000);
      expect(ctx.errors).toEqual([]);
    } finally {
      await ctx.manager.close();
      ctx.db.close();
      tmp.cleanup();
    }
  });
});

const ray = ciRay();
(ray ? describe : describe.skip)("GPU use of a Ray job (the real Ray head of .ci/services.sh: its node stats)", () => {
  it('reads the head\'s node stats while the job runs: its node has no GPU, said as Ray says it', async () => {
    const tmp = tempDir('spade-jobs-gpu-ray-');
    const ctx = makeManager(tmp.dir, { gpuIntervalS: 1 });
    try {
      const job = await ctx.manager.submit(
        buildSpec({ name: 'ray gpu', backend: 'ray', ray: { address: ray!.address, numCpus: 0 }, workdir: tmp.dir, command: ['sleep', '8'], poolDir: null, importEnvironments: false }),
      );
      const v = await waitFor("Ray's answer", () => {
        const x = ctx.manager.gpu.store.view(job.id);
        return x.nodes.length && x.sampler?.state === 'sampling' ? x : null;
      }, 60_000);
      expect(v.sampler!.detail).toContain("Ray's node stats (GET /nodes?view=summary)");
      expect(v.nodes.every((n) => n.state === 'no-gpu' && n.detail === 'Ray reports no GPU on this node' && n.gpus.length === 0)).toBe(true);
      const done = await waitState(ctx.manager, job.id, ['succeeded', 'failed', 'lost', 'cancelled']);
      expect(done.state, done.detail).toBe('succeeded');
      await waitFor('the sampler to end with the job', () => ctx.manager.gpu.store.view(job.id).sampler?.state === 'ended', 30_000);
      expect(ctx.manager.gpu.store.view(job.id).sampler!.detail).toBe('sampling stopped: the job ended (succeeded)');
    } finally {
      await ctx.manager.close();
      ctx.db.close();
      tmp.cleanup();
    }
  });
});
