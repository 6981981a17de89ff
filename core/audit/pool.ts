import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { cpus } from 'node:os';
import { probeNetworkNamespace, probePython } from '../runtime/native';
import { runtimePaths } from '../runtime/paths';
import { ALL_CHECKS, SPADE_CHECKS, checkSelected, type AuditOptions, type CheckResult, type EnvAudit } from './types';

/**
 * A pool of long-lived native CPython processes (native/cpython_main.py with its sandbox hook and
 * limits) that each run whole audits, one environment per request: the checks play every episode
 * inside the interpreter, so one environment costs one round trip. Each environment still gets a
 * fresh namespace and its own `random` module inside the process. A process that dies or stops
 * answering is killed and replaced, and that environment's audit records the failure as evidence.
 */
export interface PoolOptions {
  workers?: number;
  memoryMb?: number;
  /** Wall-clock limit for one whole audit, for hangs the in-process timer cannot interrupt (C code). */
  envTimeoutSec?: number;
  networkNamespace?: boolean;
}

interface Job {
  source: string;
  options: AuditOptions;
  resolve: (r: EnvAudit) => void;
}

const PHASE_RE = /@audit-phase (\S+)/g;

class AuditProcess {
  readonly proc: ChildProcess;
  dead = false;
  ready: Promise<void>;
  private job?: Job & { timer: NodeJS.Timeout; started: number };
  private phase = 'spade.syntax';
  private stderrTail = '';
  private readyResolve!: () => void;
  private nextId = 1;

  constructor(cmd: string, args: string[], private readonly envTimeoutMs: number, private readonly onDead: (p: AuditProcess) => void) {
    this.ready = new Promise((r) => (this.readyResolve = r));
    this.proc = spawn(cmd, args, {
      cwd: '/',
      env: { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', PYTHONDONTWRITEBYTECODE: '1', OPENBLAS_NUM_THREADS: '1', OMP_NUM_THREADS: '1', MKL_NUM_THREADS: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    createInterface({ input: this.proc.stdout! }).on('line', (l) => this.onLine(l));
    this.proc.stderr!.on('data', (d: Buffer) => {
      const text = d.toString('utf8');
      for (const m of text.matchAll(PHASE_RE)) this.phase = m[1]!;
      this.stderrTail = (this.stderrTail + text.replace(PHASE_RE, '')).slice(-2000);
    });
    this.proc.on('exit', (code, signal) => this.die(`the interpreter exited (${signal ?? `code ${code}`})`, false));
    this.proc.on('error', (e) => this.die(`could not start Python: ${e.message}`, false));
    this.proc.stdin!.on('error', () => {});
    // cpython_main answers nothing until asked; a ping tells us it has started.
    this.proc.stdin!.write(JSON.stringify({ id: 0, cmd: 'ping' }) + '\n');
  }

  get busy(): boolean {
    return !!this.job;
  }

  run(job: Job): void {
    this.phase = 'spade.syntax';
    const timer = setTimeout(() => this.die(`the audit ran past ${this.envTimeoutMs / 1000} s and the process was killed`, true), this.envTimeoutMs);
    this.job = { ...job, timer, started: Date.now() };
    const req = { id: this.nextId++, cmd: 'audit', source: job.source, options: { ...job.options, phases: true } };
    this.proc.stdin!.write(JSON.stringify(req) + '\n');
  }

  private onLine(line: string): void {
    let msg: { id?: number; ok?: boolean; result?: EnvAudit; error?: { message?: string; type?: string } };
    try {
      msg = JSON.parse(line);
    } catch {
      this.die('the interpreter wrote something that is not a protocol reply', false);
      return;
    }
    if (msg.id === 0) {
      this.readyResolve();
      return;
    }
    const job = this.job;
    if (!job) return;
    clearTimeout(job.timer);
    this.job = undefined;
    if (msg.ok && msg.result) job.resolve(msg.result);
    else job.resolve(deadAudit(job.options, 'spade.syntax', `the audit command failed: ${msg.error?.type ?? ''} ${msg.error?.message ?? ''}`.trim(), '', Date.now() - job.started, false));
    this.onDead(this); // not dead: the pool uses the same callback to hand out the next job
  }

  die(reason: string, timedOut: boolean): void {
    if (this.dead) return;
    this.dead = true;
    this.readyResolve();
    const job = this.job;
    this.job = undefined;
    if (job) {
      clearTimeout(job.timer);
      job.resolve(deadAudit(job.options, this.phase, reason, this.stderrTail.trim(), Date.now() - job.started, timedOut));
    }
    try {
      this.proc.kill('SIGKILL');
    } catch {
      // already gone
    }
    this.onDead(this);
  }
}

/** The audit of an environment whose interpreter died or hung beyond reach: the check running then fails. */
export function deadAudit(options: AuditOptions, phase: string, reason: string, stderrTail: string, elapsedMs: number, timedOut: boolean): EnvAudit {
  const checks: CheckResult[] = [];
  const spadeIdx = (SPADE_CHECKS as readonly string[]).indexOf(phase);
  for (const id of ALL_CHECKS) {
    if (id.startsWith('tool.')) continue;
    if (!checkSelected(id, options.checks)) continue;
    const before = spadeIdx >= 0 ? (SPADE_CHECKS as readonly string[]).indexOf(id) >= 0 && (SPADE_CHECKS as readonly string[]).indexOf(id) < spadeIdx : false;
    if (id === phase) checks.push({ id, status: 'fail', message: `${timedOut ? 'Hung' : 'Crashed'} during this check: ${reason}`, evidence: { observed: reason, ...(stderrTail ? { stderr: stderrTail.slice(-1000) } : {}) } });
    else if (id === 'timing' && timedOut) checks.push({ id, status: 'fail', message: `A call did not return during ${phase}; the process was killed`, evidence: { call: phase, observed: reason } });
    else if (before) checks.push({ id, status: 'pass', message: 'Passed before the interpreter died', evidence: {} });
    else checks.push({ id, status: 'skip', message: `Not run: the interpreter died during ${phase}`, evidence: {} });
  }
  return { className: null, toolUse: false, checks, elapsedMs };
}

export class AuditPool {
  private readonly procs: AuditProcess[] = [];
  private readonly queue: Job[] = [];
  private readonly size: number;
  private readonly envTimeoutMs: number;
  private closed = false;
  restarts = 0;

  constructor(private readonly opts: PoolOptions = {}) {
    this.size = Math.max(1, opts.workers ?? Math.max(1, cpus().length));
    this.envTimeoutMs = (opts.envTimeoutSec ?? 120) * 1000;
  }

  get workers(): number {
    return this.size;
  }

  private command(): { cmd: string; args: string[] } {
    const py = probePython();
    if (!py) throw new Error('No usable python3 found (set SPADE_PYTHON to an interpreter, 3.8 or newer)');
    // The CPU limit is per process and these processes live for a whole batch: make it generous;
    // runaways are stopped by the per-call timer and the per-audit wall clock instead.
    const config = JSON.stringify({ memoryMb: this.opts.memoryMb ?? 2048, cpuSec: 86_400, timeoutSec: 30 });
    const args = ['-s', join(runtimePaths().nativeDir, 'cpython_main.py'), config];
    if ((this.opts.networkNamespace ?? true) && probeNetworkNamespace()) return { cmd: 'unshare', args: ['-rn', py.path, ...args] };
    return { cmd: py.path, args };
  }

  private spawnOne(): AuditProcess {
    const { cmd, args } = this.command();
    const p = new AuditProcess(cmd, args, this.envTimeoutMs, (q) => this.onFree(q));
    this.procs.push(p);
    return p;
  }

  private onFree(p: AuditProcess): void {
    if (p.dead) {
      const i = this.procs.indexOf(p);
      if (i >= 0) this.procs.splice(i, 1);
      if (!this.closed) this.restarts++;
    }
    this.pump();
  }

  private pump(): void {
    if (this.closed) return;
    while (this.queue.length) {
      let p = this.procs.find((x) => !x.busy && !x.dead);
      if (!p && this.procs.length < this.size) p = this.spawnOne();
      if (!p) return;
      p.run(this.queue.shift()!);
    }
  }

  audit(source: string, options: AuditOptions = {}): Promise<EnvAudit> {
    if (this.closed) return Promise.reject(new Error('the audit pool is closed'));
    return new Promise((resolve) => {
      this.queue.push({ source, options, resolve });
      this.pump();
    });
  }

  /** Drops queued work (running audits finish); used by cancel. */
  clearQueue(): number {
    const n = this.queue.length;
    this.queue.length = 0;
    return n;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.queue.length = 0;
    for (const p of this.procs.splice(0)) {
      p.proc.stdin?.end();
      const t = setTimeout(() => p.die('closed', false), 500);
      t.unref();
    }
  }
}
