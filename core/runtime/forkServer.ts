import { spawn, type ChildProcess } from 'node:child_process';
import type { HarnessErrorKind, HarnessReply } from './types';
import type { WireRequest } from './protocol';
import { errorMessage } from '../api/errorMessage';
import { onLines } from './childProtocol';
import { CallSupervisor, readViolation, StderrTail, type SandboxViolation } from './supervisor';

export type { SandboxViolation } from './supervisor';

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

/** One session's process inside the server, its calls kept by the shared supervisor. */
export class ForkedSession {
  private readonly calls: CallSupervisor;
  /** Refused attempts (open, fork, socket ...) the sandbox reported for this session. */
  readonly violations: SandboxViolation[] = [];
  private readonly tail = new StderrTail(2000);

  constructor(
    readonly id: string,
    private readonly server: ForkServer,
    graceMs: number,
  ) {
    this.calls = new CallSupervisor(
      {
        send: (call) => server.write(`S${id} ${call.line}\n`),
        kill: () => server.kill(id),
      },
      {
        graceMs,
        texts: { failure: 'Native interpreter failure', gone: 'the Python process is gone; this session is closed', closed: 'the session was closed' },
      },
    );
  }

  get dead(): boolean {
    return this.calls.state === 'dead';
  }

  /** What the session's process wrote to stderr lately (its own lines, not the harness's). */
  get stderrTail(): string {
    return this.tail.value;
  }

  /** ": its last stderr lines", for a failure's message. */
  stderrSuffix(): string {
    return this.tail.suffix();
  }

  /** The last check an audit announced (`@audit-phase`), to blame a dead audit precisely. */
  get phase(): string {
    return this.calls.phase;
  }

  request(req: WireRequest, timeoutMs: number, onPhase?: (phase: string) => void): Promise<HarnessReply> {
    return this.calls.request(req, timeoutMs, onPhase ? { onPhase } : {});
  }

  onReply(line: string): void {
    let reply: HarnessReply;
    try {
      reply = JSON.parse(line) as HarnessReply;
    } catch {
      this.fail('the Python process wrote something that is not a protocol reply', 'crashed');
      return;
    }
    this.calls.settle(reply);
  }

  onStderr(line: string): void {
    if (line.startsWith('@sandbox-violation ')) {
      const v = readViolation(line.slice(19));
      if (v && this.violations.length < 200) this.violations.push(v);
      return;
    }
    const m = /^@audit-phase (\S+)/.exec(line);
    if (m) {
      this.calls.notePhase(m[1]!);
      return;
    }
    this.tail.add(line + '\n');
  }

  fail(reason: string, kind: HarnessErrorKind): void {
    this.calls.die(reason, kind);
  }

  /** Ends the session: its process and everything it holds are gone after this. */
  close(): void {
    this.calls.close();
  }
}

export class ForkServer {
  private proc?: ChildProcess;
  private readonly sessions = new Map<string, ForkedSession>();
  private readonly tail = new StderrTail(4000);
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
        this.tail.add(d.toString('utf8'));
      });
      proc.on('exit', (code, signal) => {
        const why = `the Python fork server exited (${signal ?? code})${this.tail.suffix()}`;
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
        s.fail(`the session's process exited (${rest})${s.stderrSuffix()}`, 'crashed');
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
