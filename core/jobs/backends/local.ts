import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { LocalTransport } from '../localTransport';
import { jobPaths, machineHome, renderJobScript, stageJob } from '../script';
import type { JobBackend, JobRecord, LogChunk, StatusReport, SubmitResult, Transport } from '../types';

/** /proc start time of a pid, so a recycled pid is not mistaken for our job after a restart. */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

function alive(externalId: string): boolean {
  const [pidText, started] = externalId.split(':');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (started && process.platform === 'linux') {
    const now = startTime(pid);
    if (now !== null && now !== started) return false;
    // A zombie (ended, not yet reaped by us) counts as ended.
    try {
      const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (st.slice(st.lastIndexOf(')') + 2, st.lastIndexOf(')') + 3) === 'Z') return false;
    } catch {
      return false;
    }
  }
  return true;
}

function readExit(path: string): number | null {
  try {
    const n = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(n) ? n : null;
  } catch {
    return null;
  }
}

/** A child process in its own process group, its output in a log file beside the job script. */
export class LocalBackend implements JobBackend {
  readonly kind = 'local' as const;
  private readonly t = new LocalTransport();

  async submit(job: JobRecord, secrets: Record<string, string>): Promise<SubmitResult> {
    const paths = await stageJob(this.t, job, (p) => renderJobScript(job, p));
    const fd = openSync(paths.log, 'a');
    try {
      // Secrets go only into the child's environment; the script on disk never holds them.
      const child = spawn('/bin/sh', [paths.script], {
        cwd: paths.jobDir,
        detached: true,
        stdio: ['ignore', fd, fd],
        env: { ...process.env, ...secrets },
      });
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', reject);
      });
      // Reap it when it ends so it does not linger as a zombie while the app runs.
      child.on('exit', () => undefined);
      child.unref();
      const pid = child.pid!;
      return { externalId: `${pid}:${startTime(pid) ?? ''}`, remoteLog: paths.log, state: 'running' };
    } finally {
      closeSync(fd);
    }
  }

  async status(job: JobRecord): Promise<StatusReport> {
    const paths = jobPaths(job, await machineHome(this.t));
    const code = readExit(paths.exitFile);
    if (code !== null) return { state: code === 0 ? 'succeeded' : 'failed', detail: `exit code ${code}`, exitCode: code };
    if (job.externalId && alive(job.externalId)) return { state: 'running', detail: `pid ${job.externalId.split(':')[0]}` };
    return { state: 'lost', detail: 'the process ended without writing an exit code (killed?)', exitCode: null };
  }

  readLog(job: JobRecord, offset: number, max: number): Promise<LogChunk | null> {
    if (!job.remoteLog) return Promise.resolve(null);
    return this.t.readChunk(job.remoteLog, offset, max);
  }

  async stop(job: JobRecord): Promise<string> {
    const pid = Number((job.externalId ?? '').split(':')[0]);
    if (!job.externalId || !Number.isInteger(pid) || pid <= 1) return 'no process recorded: nothing to signal';
    // The whole process group, not just its leader: daemons the script started (a Ray head) stay
    // in it and outlive SIGTERM by seconds, so the group is waited for and then killed.
    const groupAlive = (): boolean => {
      try {
        process.kill(-pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    if (!groupAlive()) return `process group ${pid} had already ended`;
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      return `process group ${pid} had already ended`;
    }
    for (let i = 0; i < 50 && groupAlive(); i++) await new Promise((r) => setTimeout(r, 100));
    if (!groupAlive()) return `SIGTERM to process group ${pid}: it ended`;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
    for (let i = 0; i < 50 && groupAlive(); i++) await new Promise((r) => setTimeout(r, 100));
    return `SIGTERM to process group ${pid}, then SIGKILL after 5 s: ${groupAlive() ? 'some of it is still running' : 'it ended'}`;
  }

  files(): Promise<Transport | null> {
    return Promise.resolve(this.t);
  }
}
