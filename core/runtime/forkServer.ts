import { spawn, type ChildProcess } from 'node:child_process';
import { failure, type HarnessReply } from './types';
import type { WireRequest } from './protocol';
import { errorMessage } from '../api/errorMessage';
import { onLines } from './childProtocol';

/**
 * The supervisor of one native fork server (native/cpython_main.py): a Python process, inside
 * bubblewrap, that never runs environment code and forks one child process per session. Requests
 * are routed by session id; a child that hangs past its call's deadline is killed (the server
 * stays), a server that dies fails every session it held.
 *
 * Wire, one line each: to the server `O<sid> <json>` open, `S<sid> <request>`, `K<sid>` kill,
 * `P` ping; from it `Z <json>`, `R<sid> <reply>`, `E<sid> <stderr line>`, `X<sid> <exit json>`.
 */
export interface ForkServerCommand {
  cmd: string;
  args: string[];
  env: Record<string, string>;
}

export interface SandboxViolation {
  event: string;
  detail: string;
}

interface Pending {
  line: string;
  timeoutMs: number;
  resolve: (r: HarnessReply) => void;
}

/** One session's process inside the server: a queue of requests answered in order. */
export class ForkedSession {
  private queue: Pending[] = [];
  private inflight?: Pending & { timer: NodeJS.Timeout };
  private nextId = 1;
  dead = false;
  /** Refused attempts (open, fork, socket ...) the sandbox reported for this session. */
  readonly violations: SandboxViolation[] = [];
  /** The last check an audit announced (`@audit-phase`), to blame a dead audit precisely. */
  phase = '';
  stderrTail = '';

  constructor(
    readonly id: string,
    private readonly server: ForkServer,
    private readonly graceMs: number,
  ) {}

  request(req: WireRequest, timeoutMs: number): Promise<HarnessReply> {
    if (this.dead) return Promise.resolve(failure('crashed', 'the Python process is gone; this session is closed'));
    return new Promise((resolve) => {
      const id = this.nextId++;
      this.queue.push({ line: JSON.stringify({ ...req, id, timeoutSec: timeoutMs / 1000 }), timeoutMs, resolve });
      this.pump();
    });
  }

  private pump(): void {
    if (this.dead || this.inflight || !this.queue.length) return;
    const next = this.queue.shift()!;
    // The child's own timer interrupts Python; this one is for hangs in C code, which only a kill ends.
    const timer = setTimeout(() => this.fail(`call ran past ${next.timeoutMs} ms and did not stop at the timer; the process was killed`, 'timeout'), next.timeoutMs + this.graceMs);
    this.inflight = { ...next, timer };
    this.server.write(`S${this.id} ${next.line}\n`);
  }

  onReply(line: string): void {
    const cur = this.inflight;
    if (!cur) return;
    let reply: HarnessReply;
    try {
      reply = JSON.parse(line) as HarnessReply;
    } catch {
      this.fail('the Python process wrote something that is not a protocol reply', 'crashed');
      return;
    }
    clearTimeout(cur.timer);
    this.inflight = undefined;
    cur.resolve(reply);
    this.pump();
  }

  onStderr(line: string): void {
    if (line.startsWith('@sandbox-violation ')) {
      try {
        const v = JSON.parse(line.slice(19)) as SandboxViolation;
        if (this.violations.length < 200 && typeof v.event === 'string') this.violations.push({ event: v.event.slice(0, 100), detail: String(v.detail ?? '').slice(0, 300) });
      } catch {
        // not one of ours
      }
      return;
    }
    const m = /^@audit-phase (\S+)/.exec(line);
    if (m) {
      this.phase = m[1]!;
      return;
    }
    this.stderrTail = (this.stderrTail + line + '\n').slice(-2000);
  }

  fail(reason: string, kind: string): void {
    if (this.dead) return;
    this.dead = true;
    const cur = this.inflight;
    this.inflight = undefined;
    if (cur) {
      clearTimeout(cur.timer);
      cur.resolve(failure(kind, `${kind === 'timeout' ? 'Time limit' : 'Native interpreter failure'}: ${reason}`, { restarted: true, ...(this.phase ? { phase: this.phase } : {}) }));
    }
    for (const q of this.queue.splice(0)) q.resolve(failure('crashed', `the Python process is gone (${reason})`));
    this.server.kill(this.id);
  }

  /** Ends the session: its process and everything it holds are gone after this. */
  close(): void {
    if (!this.dead) {
      this.dead = true;
      for (const q of this.queue.splice(0)) q.resolve(failure('closed', 'the session was closed'));
      const cur = this.inflight;
      this.inflight = undefined;
      if (cur) {
        clearTimeout(cur.timer);
        cur.resolve(failure('closed', 'the session was closed'));
      }
    }
    this.server.kill(this.id);
  }
}

export class ForkServer {
  private proc?: ChildProcess;
  private readonly sessions = new Map<string, ForkedSession>();
  private stderrTail = '';
  private readyPromise?: Promise<Record<string, unknown>>;
  private readyResolve?: (facts: Record<string, unknown>) => void;
  facts: Record<string, unknown> = {};
  dead = false;
  crashes = 0;

  constructor(
    private readonly command: () => ForkServerCommand,
    private readonly opts: { graceMs?: number; log?: (level: 'info' | 'warn' | 'error', msg: string) => void; onDeath?: (reason: string) => void } = {},
  ) {}

  /** Starts the server process (once); resolves with what it says of itself. */
  start(): Promise<Record<string, unknown>> {
    if (this.readyPromise) return this.readyPromise;
    this.readyPromise = new Promise((resolve, reject) => {
      this.readyResolve = resolve;
      let c: ForkServerCommand;
      try {
        c = this.command();
      } catch (e) {
        this.dead = true;
        reject(e instanceof Error ? e : new Error(errorMessage(e)));
        return;
      }
      const proc = spawn(c.cmd, c.args, { cwd: '/', env: c.env, stdio: ['pipe', 'pipe', 'pipe'] });
      this.proc = proc;
      onLines(proc.stdout!, (line) => this.onLine(line));
      proc.stderr!.on('data', (d: Buffer) => {
        this.stderrTail = (this.stderrTail + d.toString('utf8')).slice(-4000);
      });
      proc.on('exit', (code, signal) => {
        const why = `the Python fork server exited (${signal ?? code})${this.stderrTail ? `: ${this.stderrTail.trim().split('\n').slice(-3).join(' | ')}` : ''}`;
        if (!this.readyResolve) this.die(why);
        else {
          this.die(why);
          reject(new Error(why));
        }
      });
      proc.on('error', (e) => {
        this.die(`could not start Python: ${e.message}`);
        reject(e);
      });
      proc.stdin!.on('error', () => {});
    });
    return this.readyPromise;
  }

  private onLine(line: string): void {
    const tag = line.charCodeAt(0);
    if (tag === 90 /* Z */) {
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(line.slice(2)) as Record<string, unknown>;
      } catch {
        return;
      }
      if (msg.ready && this.readyResolve) {
        this.facts = msg;
        this.readyResolve(msg);
        this.readyResolve = undefined;
      }
      return;
    }
    const sp = line.indexOf(' ');
    if (sp < 0) return;
    const sid = line.slice(1, sp);
    const s = this.sessions.get(sid);
    if (!s) return;
    const rest = line.slice(sp + 1);
    if (tag === 82 /* R */) s.onReply(rest);
    else if (tag === 69 /* E */) s.onStderr(rest);
    else if (tag === 88 /* X */) {
      this.sessions.delete(sid);
      if (!s.dead) {
        this.crashes++;
        s.fail(`the session's process exited (${rest})${s.stderrTail ? `: ${s.stderrTail.trim().split('\n').slice(-3).join(' | ')}` : ''}`, 'crashed');
      }
    }
  }

  write(line: string): void {
    if (this.dead || !this.proc) return;
    this.proc.stdin!.write(line);
  }

  /** A new session: a fresh process forked from the server, walls up before any game code. */
  async open(sid: string, options: Record<string, unknown> = {}): Promise<ForkedSession> {
    if (!/^[\w.:-]{1,100}$/.test(sid)) throw new Error(`bad session id ${sid.slice(0, 40)}`);
    await this.start();
    if (this.dead) throw new Error('the Python fork server is not running');
    const s = new ForkedSession(sid, this, this.opts.graceMs ?? 3000);
    this.sessions.set(sid, s);
    this.write(`O${sid} ${JSON.stringify(options)}\n`);
    return s;
  }

  get(sid: string): ForkedSession | undefined {
    return this.sessions.get(sid);
  }

  kill(sid: string): void {
    this.write(`K${sid}\n`);
  }

  get size(): number {
    return this.sessions.size;
  }

  private die(reason: string): void {
    if (this.dead) return;
    this.dead = true;
    this.opts.log?.('warn', reason);
    for (const s of [...this.sessions.values()]) s.fail(reason, 'crashed');
    this.sessions.clear();
    try {
      this.proc?.kill('SIGKILL');
    } catch {
      // gone
    }
    this.opts.onDeath?.(reason);
  }

  async shutdown(): Promise<void> {
    for (const s of [...this.sessions.values()]) s.close();
    this.sessions.clear();
    if (!this.proc || this.dead) return;
    const proc = this.proc;
    this.dead = true;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        try {
          proc.kill('SIGKILL');
        } catch {
          // gone
        }
        resolve();
      }, 1000);
      t.unref();
      proc.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
      proc.stdin!.end();
    });
  }
}
