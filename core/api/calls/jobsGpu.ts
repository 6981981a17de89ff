import { z } from 'zod';
import { defineCall } from '../contract';

/** GPU use of a job's nodes, sampled over the job's own connection (core/jobs/gpu). */

const num = z.number().nullable();

export const gpuSamplerStateSchema = z.enum(['sampling', 'dropped', 'ended', 'unavailable']);

export const jobGpuSchema = z.object({
  /** How the sampler stands: sampling, its link dropped (it reconnects), ended with the job, or unable to start. Null before it first ran. */
  sampler: z.object({ state: gpuSamplerStateSchema, detail: z.string(), updatedAt: z.string() }).nullable(),
  nodes: z.array(
    z.object({
      node: z.string(),
      /** `no-gpu`: no nvidia-smi on the node's PATH, or it listed no GPU (Ray: the node reports none); `detail` says which. */
      state: z.enum(['gpus', 'no-gpu']),
      detail: z.string(),
      gpus: z.array(
        z.object({
          index: z.number().int(),
          uuid: z.string().nullable(),
          name: z.string().nullable(),
          /** MiB, the last value read. */
          memTotal: num,
          /** Seconds since the epoch, when the workbench read each sample; the series below share it. */
          t: z.array(z.number()),
          /** Percent. */
          util: z.array(num),
          /** MiB. */
          memUsed: z.array(num),
          /** Watts. */
          power: z.array(num),
          /** Degrees Celsius. */
          temp: z.array(num),
        }),
      ),
      /** The processes the last `--query-compute-apps` (Ray: processes_pids) found on each GPU. */
      procs: z.array(z.object({ gpuUuid: z.string(), gpuIndex: z.number().int().nullable(), pid: num, processName: z.string().nullable(), usedMemory: num })),
      procsAt: num,
    }),
  ),
});
export type JobGpu = z.infer<typeof jobGpuSchema>;

export const jobsGpuCalls = {
  'jobs.gpu': defineCall({
    name: 'jobs.gpu',
    summary: "GPU use of a job's nodes (utilization, memory, power, temperature per GPU over time, and which processes hold each), or why no GPU was seen.",
    input: z.object({ id: z.string().min(1).max(64), maxPoints: z.number().int().min(10).max(5000).optional() }).strict(),
    output: jobGpuSchema,
  }),
} as const;
