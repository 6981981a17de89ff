import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../base/appInfo';
import { jobPaths, machineHome, renderSbatch, stageJob } from '../script';
import { secretPrologue, secretStdin, shQuote } from '../shell';
import type { JobBackend, JobRecord, JobState, LogChunk, StatusReport, SubmitResult, Transport } from '../types';
import type { TransportFor } from './ssh';
import { DomainError } from '../../errors';

/** Every Slurm job state, and what it means for the workbench's one job model. */
export const SLURM_STATES: Record<string, JobState> = {
  PENDING: 'pending',
  REQUEUED: 'pending',
  REQUEUE_HOLD: 'pending',
  REQUEUE_FED: 'pending',
  RESV_DEL_HOLD: 'pending',
  CONFIGURING: 'running',
  RUNNING: 'running',
  COMPLETING: 'running',
  RESIZING: 'running',
  SIGNALING: 'running',
  STAGE_OUT: 'running',
  STOPPED: 'suspended',
  SUSPENDED: 'suspended',
  COMPLETED: 'succeeded',
  CANCELLED: 'cancelled',
  PREEMPTED: 'cancelled',
  REVOKED: 'cancelled',
  FAILED: 'failed',
  NODE_FAIL: 'failed',
  BOOT_FAIL: 'failed',
  OUT_OF_MEMORY: 'failed',
  SPECIAL_EXIT: 'failed',
  TIMEOUT: 'timeout',
  DEADLINE: 'timeout',
};

export function mapSlurmState(raw: string): JobState {
  // `CANCELLED by 0` in scontrol, arrays of flags in newer squeue --json.
  const base = raw.trim().split(/[\s+]/)[0]!.toUpperCase();
  return SLURM_STATES[base] ?? 'running';
}

/**
 * A wait status as Slurm 22.05's `squeue --json` gives `exit_code` (768 for `exit 3`, 9 for
 * SIGKILL): the exit code, or 128 + the signal as a shell reports a killed command.
 */
export function decodeWaitStatus(status: number): { exitCode: number; signal: number | null } {
  const signal = status & 0x7f;
  if (signal !== 0) return { exitCode: 128 + signal, signal };
  return { exitCode: (status >> 8) & 0xff, signal: null };
}

export interface SqueueInfo {
  state: string;
  reason: string;
  exitCode: number | null;
}

/**
 * Every job in `squeue --json` (22.05 ignores --jobs, so one call answers for all jobs of a
 * host). job_state is a string up to 23.02 and a list of flags after it; exit_code is a raw wait
 * status as a number (22.05) or an object with return_code (later); it means nothing while a job runs.
 */
export function parseSqueueAll(text: string): Map<string, SqueueInfo> {
  const data = JSON.parse(text) as { jobs?: Record<string, unknown>[] };
  const out = new Map<string, SqueueInfo>();
  for (const j of data.jobs ?? []) {
    const st = j.job_state;
    const state = Array.isArray(st) ? String(st[0] ?? 'UNKNOWN') : String(st ?? 'UNKNOWN');
    const ec = j.exit_code;
    let exitCode: number | null = null;
    if (typeof ec === 'number') exitCode = decodeWaitStatus(ec).exitCode;
    else if (ec && typeof ec === 'object') {
      const rc = (ec as { return_code?: unknown }).return_code;
      if (typeof rc === 'number') exitCode = rc;
      else if (rc && typeof rc === 'object' && typeof (rc as { number?: unknown }).number === 'number') exitCode = (rc as { number: number }).number;
    }
    const mapped = mapSlurmState(state);
    const ended = mapped !== 'pending' && mapped !== 'running' && mapped !== 'suspended';
    out.set(String(j.job_id), { state, reason: String(j.state_reason ?? ''), exitCode: ended ? exitCode : null });
  }
  return out;
}

export function parseSqueueJson(text: string, jobId: string): SqueueInfo | null {
  return parseSqueueAll(text).get(jobId) ?? null;
}

export function parseScontrol(text: string): { state: string; reason: string; exitCode: number | null } | null {
  const st = /JobState=(\S+)/.exec(text);
  if (!st) return null;
  const reason = /Reason=(\S+)/.exec(text)?.[1] ?? '';
  const ec = /ExitCode=(\d+):(\d+)/.exec(text);
  return { state: st[1]!, reason, exitCode: ec ? Number(ec[1]) : null };
}

const QUEUE_TTL_MS = 2000;

let cachedTemplate: string | null = null;
export function sbatchTemplate(): string {
  cachedTemplate ??= readFileSync(join(packageRoot(), 'resources', 'jobs', 'sbatch.template'), 'utf8');
  return cachedTemplate;
}

/** Slurm over SSH: sbatch --parsable, squeue --json (scontrol once it left the queue), scancel. */
export class SlurmBackend implements JobBackend {
  readonly kind = 'slurm' as const;
  /** One `squeue --json` per host answers for every job there; calls within `QUEUE_TTL_MS` share it. */
  private readonly queues = new Map<Transport, { at: number; jobs: Promise<Map<string, SqueueInfo>> }>();
  /** How many times squeue ran (the tests count them). */
  squeueCalls = 0;
  constructor(private readonly transportFor: TransportFor) {}

  private queue(t: Transport): Promise<Map<string, SqueueInfo>> {
    const hit = this.queues.get(t);
    if (hit && Date.now() - hit.at < QUEUE_TTL_MS) return hit.jobs;
    this.squeueCalls++;
    const jobs = t.exec('squeue --json 2>/dev/null').then((q) => {
      if (q.code !== 0 || !q.stdout.trim()) return new Map<string, SqueueInfo>();
      try {
        return parseSqueueAll(q.stdout);
      } catch {
        return new Map<string, SqueueInfo>();
      }
    });
    this.queues.set(t, { at: Date.now(), jobs });
    return jobs;
  }

  async submit(job: JobRecord, secrets: Record<string, string>): Promise<SubmitResult> {
    const t = await this.transportFor(job);
    const paths = await stageJob(t, job, (p) => renderSbatch(sbatchTemplate(), job, p));
    const names = job.spec.secretEnv;
    // sbatch exports the submitting shell's environment (--export=ALL), which is how secrets read
    // from stdin reach the job without being written into the script.
    const submit = `cd ${shQuote(paths.jobDir)} && sbatch --parsable --output=${shQuote(paths.log)} --chdir=${shQuote(paths.workdir)} ${shQuote(paths.script)}`;
    const cmd = names.length ? `${secretPrologue(names)} && ${submit}` : submit;
    const r = await t.exec(cmd, { stdin: secretStdin(names, secrets) });
    const id = r.stdout.trim().split('\n').pop()?.split(';')[0] ?? '';
    if (r.code !== 0 || !/^\d+(_\d+)?$/.test(id)) throw new DomainError('unavailable', `sbatch failed on ${t.label}: ${(r.stderr || r.stdout).trim().slice(0, 500)}`);
    return { externalId: id, remoteLog: paths.log, state: 'pending', detail: `slurm job ${id}` };
  }

  /** A job submitted some other way: its output file, as scontrol tells it, is the log to follow. */
  async attach(job: JobRecord): Promise<SubmitResult> {
    const id = job.externalId ?? '';
    if (!/^\d+(_\d+)?$/.test(id)) throw new DomainError('invalid_input', `Not a Slurm job id: ${JSON.stringify(id.slice(0, 40))}`);
    const t = await this.transportFor(job);
    const r = await t.exec(`scontrol show job ${id} 2>&1`);
    const info = parseScontrol(r.stdout);
    if (r.code !== 0 || !info) throw new DomainError('not_found', `Slurm does not know a job ${id} on ${t.label}: ${r.stdout.trim().slice(0, 300)}`);
    const out = /\bStdOut=(\S+)/.exec(r.stdout)?.[1] ?? null;
    // `UserId=alice(1001)`: the job's owner, as Slurm itself records it.
    const user = /\bUserId=([^\s(]+)/.exec(r.stdout)?.[1];
    const owner = `Slurm job ${id} on ${t.label}, ${user ? `owned by ${user}` : 'owner not given by scontrol'}`;
    return { externalId: id, remoteLog: out, state: mapSlurmState(info.state), detail: `slurm job ${id}: ${info.state}`, owner };
  }

  /** The node the batch script runs on, unless it is the submit host itself (one-node clusters). */
  async rayHeadHost(job: JobRecord): Promise<string | null> {
    const id = job.externalId ?? '';
    if (!/^\d+(_\d+)?$/.test(id)) return null;
    const t = await this.transportFor(job);
    const r = await t.exec(`scontrol show job ${id} 2>/dev/null; echo "@@host $(hostname -s)"`);
    const node = /\bBatchHost=(\S+)/.exec(r.stdout)?.[1] ?? null;
    const self = /@@host (\S+)/.exec(r.stdout)?.[1] ?? null;
    if (!node || node === '(null)' || !/^[A-Za-z0-9._-]+$/.test(node) || node === self) return null;
    return node;
  }

  async status(job: JobRecord): Promise<StatusReport> {
    const t = await this.transportFor(job);
    const id = job.externalId ?? '';
    if (!/^\d+(_\d+)?$/.test(id)) return { state: 'lost', detail: 'no Slurm job id recorded' };
    let info = (await this.queue(t)).get(id) ?? null;
    if (!info) {
      const s = await t.exec(`scontrol show job ${id} 2>/dev/null`);
      info = parseScontrol(s.stdout);
    }
    if (!info) {
      // Purged from the controller (MinJobAge): the exit file written by the script is the last word.
      const paths = jobPaths(job, await machineHome(t));
      const e = await t.exec(`cat ${shQuote(paths.exitFile)} 2>/dev/null`);
      const code = Number(e.stdout.trim());
      if (e.stdout.trim() && Number.isInteger(code)) return { state: code === 0 ? 'succeeded' : 'failed', detail: `slurm job ${id}: exit code ${code}`, exitCode: code };
      return { state: 'lost', detail: `slurm job ${id} is no longer known to Slurm` };
    }
    const state = mapSlurmState(info.state);
    const reason = info.reason && info.reason !== 'None' ? ` (${info.reason})` : '';
    return { state, detail: `slurm job ${id}: ${info.state}${reason}`, exitCode: info.exitCode };
  }

  async readLog(job: JobRecord, offset: number, max: number): Promise<LogChunk | null> {
    if (!job.remoteLog) return null;
    return (await this.transportFor(job)).readChunk(job.remoteLog, offset, max);
  }

  async stop(job: JobRecord): Promise<string> {
    const id = job.externalId ?? '';
    if (!/^\d+(_\d+)?$/.test(id)) return 'no Slurm job id recorded: nothing to cancel';
    const t = await this.transportFor(job);
    const r = await t.exec(`scancel ${id}`);
    const output = `${r.stdout}\n${r.stderr}`.trim().replace(/\s*\n\s*/g, ' / ').slice(0, 500);
    const answer = `scancel ${id} exited ${r.code}${output ? `: ${output}` : ' with no output'}`;
    if (r.code !== 0) throw new DomainError('unavailable', answer);
    // Slurm takes a few seconds (KillWait) to end the job: wait for it, and forget the cached
    // queue, so the poll after a stop sees the end rather than the queue from before it.
    let last: string | null = null;
    for (let i = 0; i < 30; i++) {
      const info = parseScontrol((await t.exec(`scontrol show job ${id} 2>/dev/null`)).stdout);
      if (!info) break;
      last = info.state;
      const st = mapSlurmState(info.state);
      if (st !== 'running' && st !== 'pending' && st !== 'suspended') break;
      await new Promise((res) => setTimeout(res, 500));
    }
    this.queues.delete(t);
    return `${answer}; Slurm then said ${last ?? 'nothing (the job has left the controller)'}`;
  }

  async files(job: JobRecord): Promise<Transport | null> {
    return this.transportFor(job);
  }
}
