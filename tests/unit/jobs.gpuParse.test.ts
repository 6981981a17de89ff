import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GPU_QUERY, APPS_QUERY, parseAppLine, parseGpuLine, parseGpuSample, readNumber } from '../../core/jobs/gpu/nvidiaSmi';
import { nodeScript, readNodeLine } from '../../core/jobs/gpu/nodeScript';
import { parseRayNodes } from '../../core/jobs/gpu/rayNodes';

const U0 = 'GPU-5b2c9d0e-7a41-4f3e-9c1d-2e8f6a7b3c41';

describe("nvidia-smi's csv,noheader,nounits rows", () => {
  it('reads every field of a documented --query-gpu row', () => {
    expect(parseGpuLine(`0, ${U0}, NVIDIA H100 80GB HBM3, 87, 40536, 81559, 312.45, 61`)).toEqual({
      index: 0,
      uuid: U0,
      name: 'NVIDIA H100 80GB HBM3',
      util: 87,
      memUsed: 40536,
      memTotal: 81559,
      power: 312.45,
      temp: 61,
    });
  });

  it('loses only the value nvidia-smi cannot give ([N/A], [Not Supported], ERR!, missing fields)', () => {
    const r = parseGpuLine(`3, ${U0}, Tesla T4, [Not Supported], 15, 15360, [N/A], ERR!`)!;
    expect(r).toMatchObject({ index: 3, name: 'Tesla T4', util: null, memUsed: 15, memTotal: 15360, power: null, temp: null });
    // A line cut short (an older driver that skips a field, a truncated read): the rest is null.
    expect(parseGpuLine(`1, ${U0}, A100, 5`)).toEqual({ index: 1, uuid: U0, name: 'A100', util: 5, memUsed: null, memTotal: null, power: null, temp: null });
    expect(parseGpuLine('2, [N/A], [N/A], 1, 2, 3, 4, 5')).toMatchObject({ uuid: null, name: null, util: 1, temp: 5 });
  });

  it('reads units where nounits was not honoured, and a name that holds ", "', () => {
    expect(parseGpuLine(`0, ${U0}, Quadro RTX 8000, 35 %, 1234 MiB, 48601 MiB, 70.52 W, 34`)).toMatchObject({ util: 35, memUsed: 1234, memTotal: 48601, power: 70.52, temp: 34 });
    expect(parseGpuLine(`0, ${U0}, Some GPU, rev 2, 1, 2, 3, 4.5, 6`)).toMatchObject({ name: 'Some GPU, rev 2', util: 1, memUsed: 2, memTotal: 3, power: 4.5, temp: 6 });
  });

  it('takes no GPU from what nvidia-smi prints when there is none, or from a hostile line', () => {
    for (const l of [
      'No devices were found',
      "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
      '',
      'index, uuid, name, utilization.gpu [%], memory.used [MiB]',
      `-1, ${U0}, x, 1, 2, 3, 4, 5`,
      `99999, ${U0}, x, 1, 2, 3, 4, 5`,
      `0, ${U0}, ${'A'.repeat(10_000)}, 1, 2, 3, 4, 5`,
    ])
      expect(parseGpuLine(l), l.slice(0, 40)).toBeNull();
    expect(parseGpuLine(`0, ${U0}, \u001b]0;pwned\u0007Evil, 1, 2, 3, 4, 5`)!.name).toBe(']0;pwned Evil');
    expect(readNumber('1e999')).toBeNull();
    expect(readNumber(' 12.5 ')).toBe(12.5);
  });

  it('reads one sample, a GPU once, at most 64 GPUs', () => {
    const rows = Array.from({ length: 100 }, (_v, i) => `${i}, GPU-${i}, G, 1, 2, 3, 4, 5`);
    expect(parseGpuSample([...rows, rows[0]!, 'garbage'].join('\n'))).toHaveLength(64);
    expect(parseGpuSample(`0, ${U0}, A, 1, 2, 3, 4, 5\n0, ${U0}, B, 9, 9, 9, 9, 9`).map((r) => r.name)).toEqual(['A']);
  });

  it('reads --query-compute-apps rows, a process name with commas, and refuses rows naming no GPU', () => {
    expect(parseAppLine(`${U0}, 31337, /usr/bin/python3, 40536`)).toEqual({ gpuUuid: U0, pid: 31337, processName: '/usr/bin/python3', usedMemory: 40536 });
    expect(parseAppLine(`${U0}, 7, /opt/a, b/train.py, [N/A]`)).toEqual({ gpuUuid: U0, pid: 7, processName: '/opt/a, b/train.py', usedMemory: null });
    expect(parseAppLine(`${U0}, [N/A], [N/A], 10`)).toEqual({ gpuUuid: U0, pid: null, processName: null, usedMemory: 10 });
    expect(parseAppLine('No running processes found')).toBeNull();
    expect(parseAppLine('$(rm -rf /), 1, x, 2')).toBeNull();
  });
});

describe("the sampler's stream lines", () => {
  it('asks nvidia-smi exactly the documented queries, looping with -l N', () => {
    const s = nodeScript({ intervalS: 7, watchPid: 1234, path: "/opt/cuda/bin:/usr/bin:/it's" });
    expect(s).toContain(`--query-gpu=${GPU_QUERY.join(',')} --format=csv,noheader,nounits -l 7`);
    expect(s).toContain(`--query-compute-apps=${APPS_QUERY.join(',')} --format=csv,noheader,nounits`);
    expect(s).toContain('kill -0 1234');
    expect(s).toContain(`PATH='/opt/cuda/bin:/usr/bin:/it'\\''s'; export PATH`);
    expect(nodeScript({ intervalS: 0.2 })).toContain('-l 1');
  });

  it("reads the script's tagged lines and nothing else (a banner, srun's words)", () => {
    expect(readNodeLine(`SPADEGPU\tgpu\tnode-07\t0, ${U0}, A, 1, 2, 3, 4, 5`)).toEqual({ tag: 'gpu', host: 'node-07', payload: `0, ${U0}, A, 1, 2, 3, 4, 5` });
    expect(readNodeLine("SPADEGPU\tnogpu\tvm\tnvidia-smi is not on this node's PATH")).toMatchObject({ tag: 'nogpu', host: 'vm' });
    expect(readNodeLine('SPADEGPU\tstep\tvm\t161.0')).toEqual({ tag: 'step', host: 'vm', payload: '161.0' });
    expect(readNodeLine('Welcome to the cluster!')).toBeNull();
    expect(readNodeLine('srun: error: Unable to create step for job 12')).toBeNull();
    expect(readNodeLine('SPADEGPU\trm\tvm\tx')).toBeNull();
    expect(readNodeLine('SPADEGPU\tgpu\t\t0, a, b')).toBeNull();
  });
});

describe("Ray's node stats (GET /nodes?view=summary)", () => {
  const body = (gpus: unknown[], extra: Record<string, unknown> = {}) =>
    JSON.stringify({ result: true, data: { summary: [{ hostname: 'head', ip: '10.0.0.1', raylet: { state: 'ALIVE' }, gpus, ...extra }] } });

  it("reads each GPU as Ray's reporter gives it (MB, milliwatts, processes by pid)", () => {
    const nodes = parseRayNodes(
      body([
        {
          index: 0,
          name: 'NVIDIA H200',
          uuid: U0,
          utilization_gpu: 93,
          memory_used: 120_000,
          memory_total: 143_771,
          power_mw: 612_500,
          temperature_c: 66,
          processes_pids: { '4242': { pid: 4242, gpu_memory_usage: 119_000, gpu_utilization: null } },
        },
        { index: 1, name: 'NVIDIA H200', uuid: 'GPU-2', utilization_gpu: null, memory_used: 'lots', memory_total: 143_771, processes_pids: null },
      ]),
    );
    expect(nodes).toHaveLength(1);
    expect(nodes[0]!.gpus[0]).toEqual({ index: 0, uuid: U0, name: 'NVIDIA H200', util: 93, memUsed: 120_000, memTotal: 143_771, power: 612.5, temp: 66 });
    expect(nodes[0]!.gpus[1]).toMatchObject({ util: null, memUsed: null, power: null, temp: null });
    expect(nodes[0]!.apps).toEqual([{ gpuUuid: U0, pid: 4242, processName: null, usedMemory: 119_000 }]);
  });

  it('says a node without GPUs has none, skips dead nodes, and reads nothing from a body that is not Ray\'s', () => {
    expect(parseRayNodes(body([]))).toEqual([{ node: 'head', gpus: [], apps: [] }]);
    expect(parseRayNodes(body([], { raylet: { state: 'DEAD' } }))).toEqual([]);
    expect(parseRayNodes('<html>502</html>')).toEqual([]);
    expect(parseRayNodes(JSON.stringify({ data: { summary: 'x' } }))).toEqual([]);
  });

  // Recorded from .ci's real Ray 2.60.0 head (no GPU), per-worker stats trimmed.
  it("reads the real Ray head's answer (tests/fixtures/ray-nodes-summary.json)", () => {
    const nodes = parseRayNodes(readFileSync(join(__dirname, '../fixtures/ray-nodes-summary.json'), 'utf8'));
    expect(nodes.length).toBeGreaterThan(0);
    expect(nodes.every((n) => n.gpus.length === 0)).toBe(true);
  });
});
