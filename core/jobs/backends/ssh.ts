import { jobPaths, machineHome, renderJobScript, stageJob } from '../script';
import { secretPrologue, secretStdin, shQuote } from '../shell';
import type { JobBackend, JobRecord, LogChunk, StatusReport, SubmitResult, Transport } from '../types';
import { DomainError } from '../../errors';

export type TransportFor = (job: JobRecord) => Promise<Transport>;

/** A command started detached on a remote host (setsid, its pid and log file recorded), followed later. */
export class SshBackend implements JobBackend {
  readonly kind = 'ssh' as const;
  constructor(private readonly transportFor: TransportFor) {}

  async submit(job: JobRecord, secrets: Record<string, string>): Promise<SubmitResult> {
    const t = await this.transportFor(job);
    const paths = await stageJob(t, job, (p) => renderJobScript(job, p));
    const names = job.spec.secretEnv;
    const launch = `cd ${shQuote(paths.jobDir)} && { setsid sh ${shQuote(paths.script)} > ${shQuote(paths.log)} 2>&1 < /dev/null & } && echo "$!"`;
    const cmd = names.length ? `${secretPrologue(names)} && ${launch}` : launch;
    const r = await t.exec(cmd, { stdin: secretStdin(names, secrets) });
    const pid = Number(r.stdout.trim().split('\n').pop());
    if (r.code !== 0 || !Number.isInteger(pid) || pid <= 0) throw new DomainError('unavailable', `Could not start the job on ${t.label}: ${r.stderr.trim() || r.stdout.trim()}`);
    return { externalId: String(pid), remoteLog: paths.log, state: 'running' };
  }

  async status(job: JobRecord): Promise<StatusReport> {
    const t = await this.transportFor(job);
    const paths = jobPaths(job, await machineHome(t));
    const pid = Number(job.externalId);
    const r = await t.exec(
      `if [ -f ${shQuote(paths.exitFile)} ]; then echo "exit $(cat ${shQuote(paths.exitFile)})"; elif kill -0 ${pid} 2>/dev/null; then echo running; else echo gone; fi`,
    );
    const out = r.stdout.trim();
    if (out.startsWith('exit ')) {
      const code = Number(out.slice(5));
      return { state: code === 0 ? 'succeeded' : 'failed', detail: `exit code ${code}`, exitCode: Number.isInteger(code) ? code : null };
    }
    if (out === 'running') return { state: 'running', detail: `pid ${pid} on ${t.label}` };
    if (out === 'gone') return { state: 'lost', detail: 'the process ended without writing an exit code (killed?)', exitCode: null };
    throw new DomainError('unavailable', `Unexpected status reply from ${t.label}: ${out.slice(0, 200)} ${r.stderr.slice(0, 200)}`);
  }

  async readLog(job: JobRecord, offset: number, max: number): Promise<LogChunk | null> {
    if (!job.remoteLog) return null;
    return (await this.transportFor(job)).readChunk(job.remoteLog, offset, max);
  }

  async stop(job: JobRecord): Promise<string> {
    const pid = Number(job.externalId);
    if (!Number.isInteger(pid) || pid <= 0) return 'no process recorded: nothing to signal';
    const t = await this.transportFor(job);
    // setsid made the pid a process-group leader: signal the whole group, then insist.
    // Wait for the whole group, not just its leader: a Ray head the script started is in it and
    // outlives SIGTERM by seconds. The shell says which of these happened.
    const r = await t.exec(
      `kill -0 -- -${pid} 2>/dev/null || { echo gone; exit 0; }; ` +
        `kill -TERM -- -${pid} 2>/dev/null; for i in 1 2 3 4 5 6 7 8 9 10; do kill -0 -- -${pid} 2>/dev/null || { echo term; exit 0; }; sleep 0.5; done; ` +
        `kill -KILL -- -${pid} 2>/dev/null; for i in 1 2 3 4 5 6 7 8 9 10; do kill -0 -- -${pid} 2>/dev/null || { echo kill; exit 0; }; sleep 0.5; done; echo alive`,
    );
    const said = r.stdout.trim().split('\n').pop();
    const on = `process group ${pid} on ${t.label}`;
    if (said === 'gone') return `${on} had already ended`;
    if (said === 'term') return `SIGTERM to ${on}: it ended`;
    if (said === 'kill') return `SIGTERM to ${on}, then SIGKILL after 5 s: it ended`;
    return `SIGTERM and SIGKILL to ${on}: ${said === 'alive' ? 'some of it is still running' : `unexpected reply ${JSON.stringify(r.stdout.slice(0, 200))} ${r.stderr.slice(0, 200)}`}`;
  }

  async files(job: JobRecord): Promise<Transport | null> {
    return this.transportFor(job);
  }
}
