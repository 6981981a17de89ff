import { machineHome } from '../jobs/script';
import { shQuote } from '../jobs/shell';
import { SshConnection } from '../jobs/ssh/connection';
import type { SshTarget } from '../jobs/types';
import type { OnResult, SweepExecutor, SweepWork } from './executor';
import { LineReader } from './lines';
import { harnessFiles, itemsJsonl, parseRemoteResult, type ShardConfig } from './remote';
import type { SweepItem } from './sweepStore';

/**
 * A pool audit as a Slurm job array over SSH: the harness and the items go into a folder of their
 * own on the submit host, each array task audits one shard (native/dispatch/shard_audit.py) and
 * appends each environment's raw result to its own JSONL file, which the workbench follows over
 * SFTP from byte offsets, as it follows logs. The array runs without the workbench; a resume reads
 * the files again from the start, and the store counts each result once.
 */
export interface SlurmTargetOptions {
  ssh: SshTarget;
  label: string;
  appKnownHosts: string;
  python: string;
  shardSize: number;
  envTimeoutSec: number;
}

export class SlurmExecutor<R> implements SweepExecutor<R> {
  readonly label: string;
  private readonly conn: SshConnection;

  constructor(private readonly o: SlurmTargetOptions) {
    this.label = o.label;
    this.conn = new SshConnection(o.ssh, { appKnownHosts: o.appKnownHosts });
  }

  async submit(sweepId: string, attempt: number, items: readonly SweepItem[], sources: ReadonlyMap<string, string>, work: SweepWork<R>): Promise<Record<string, unknown>> {
    const t = this.conn;
    // Each kind its own folder (audits, regrets), as it always had.
    const dir = `${await machineHome(t)}/.spade_workbench/${work.kind}s/${sweepId}/${attempt}`;
    const files = harnessFiles();
    // Every folder the harness has (native/dispatch, native/spade_src, ...): a new one must not break submission.
    for (const sub of new Set(['native/dispatch', ...files.map((f) => f.name.slice(0, f.name.lastIndexOf('/')))])) await t.mkdirp(`${dir}/${sub}`);
    for (const f of files) await t.writeFile(`${dir}/${f.name}`, f.data);
    const remote = items.map((it) => work.remoteItem(it, sources.get(it.sha256)!));
    await t.writeFile(`${dir}/items.jsonl`, itemsJsonl(remote));
    const config: ShardConfig = { python: this.o.python, envTimeoutSec: this.o.envTimeoutSec, memoryMb: 2048, workers: 1, options: work.options };
    await t.writeFile(`${dir}/config.json`, JSON.stringify(config));
    const size = this.o.shardSize;
    const tasks = Math.ceil(items.length / size);
    const script = [
      '#!/bin/sh',
      `#SBATCH --job-name=spade-${work.kind}-${sweepId}`,
      `#SBATCH --array=0-${tasks - 1}`,
      `#SBATCH --output=${dir}/task-%a.log`,
      '#SBATCH --cpus-per-task=1',
      `cd ${shQuote(dir)} || exit 1`,
      // Any python3 runs the shard runner (standard library only); it sandboxes games with config.python.
      `exec python3 native/dispatch/${work.runner}.py config.json items.jsonl "results-$SLURM_ARRAY_TASK_ID.jsonl" "$((SLURM_ARRAY_TASK_ID * ${size}))" ${size}`,
      '',
    ].join('\n');
    await t.writeFile(`${dir}/${work.kind}.sbatch`, script);
    const r = await t.exec(`cd ${shQuote(dir)} && sbatch --parsable ${work.kind}.sbatch`);
    const id = r.stdout.trim().split('\n').pop()?.split(';')[0] ?? '';
    if (r.code !== 0 || !/^\d+$/.test(id)) throw new Error(`sbatch failed on ${t.label}: ${(r.stderr || r.stdout).trim().slice(0, 500)}`);
    return { kind: 'slurm', jobId: id, dir, tasks, environments: items.length };
  }

  /** Whether any task of the array is still known to the queue. */
  private async queued(jobId: string): Promise<boolean> {
    const r = await this.conn.exec(`squeue -h -j ${jobId} -o %i 2>/dev/null`);
    return r.stdout.trim().length > 0;
  }

  async follow(handle: Record<string, unknown>, work: SweepWork<R>, onResult: OnResult<R>, signal: AbortSignal): Promise<void> {
    const jobId = String(handle.jobId);
    if (!/^\d+$/.test(jobId)) return;
    const dir = String(handle.dir);
    const readers = Array.from({ length: Number(handle.tasks) }, () => new LineReader());
    let ended = false;
    for (;;) {
      if (signal.aborted) return;
      if (!ended) ended = !(await this.queued(jobId));
      let got = 0;
      for (const [i, lines] of readers.entries()) {
        const chunk = await this.conn.readChunk(`${dir}/results-${i}.jsonl`, lines.offset, 1 << 20);
        if (!chunk || chunk.data.length === 0) continue;
        got += chunk.data.length;
        for (const line of lines.push(chunk.data)) {
          const r = parseRemoteResult(line);
          if (r) await onResult(r.key, work.fromRemote(r), r.node ?? null);
        }
      }
      if (ended && got === 0) return;
      if (got === 0) await new Promise((res) => setTimeout(res, 300));
    }
  }

  async stop(handle: Record<string, unknown>): Promise<string> {
    const jobId = String(handle.jobId);
    if (!/^\d+$/.test(jobId)) return 'no Slurm job id recorded: nothing to cancel';
    const r = await this.conn.exec(`scancel ${jobId}`);
    return `scancel ${jobId} exited ${r.code}${(r.stdout + r.stderr).trim() ? `: ${(r.stdout + r.stderr).trim().slice(0, 300)}` : ''}`;
  }

  async close(): Promise<void> {
    this.conn.close();
  }
}
