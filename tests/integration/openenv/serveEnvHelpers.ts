/** Starting `spade-workbench serve-env` as its own process, and talking to it as OpenEnv's tools do. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { WebSocket } from 'ws';
import type { StepView } from '../../../core/api/calls/episodes';

export const ROOT = resolve(import.meta.dirname, '..', '..', '..');
export const CLI = join(ROOT, 'bin', 'spade-workbench.mjs');

/** OpenEnv's own venv (scripts/openenv-venv.mjs; .ci/run makes it). */
export function openenvVenv(): string {
  const dir = process.env.SPADE_OPENENV_VENV ?? join(ROOT, 'scratch', 'openenv-venv');
  if (!existsSync(join(dir, 'bin', 'openenv'))) throw new Error(`No OpenEnv venv at ${dir}: run node scripts/openenv-venv.mjs (.ci/run does)`);
  return dir;
}

export interface Served {
  child: ChildProcess;
  url: string;
  port: number;
  token: string | null;
  stderr(): string;
  stop(): Promise<void>;
}

/** The CLI as a process; one still running after 60 s is killed and answers code -1. */
export function runCli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [CLI, ...args], { env: process.env, maxBuffer: 64 * 1024 * 1024, timeout: 60_000 }, (e, out, err) => done({ code: e ? ((e as { killed?: boolean }).killed ? -1 : ((e as { code?: number }).code ?? 1)) : 0, out, err }));
  });
}

export async function serveEnv(args: string[]): Promise<Served> {
  const child = spawn(process.execPath, [CLI, 'serve-env', ...args, '--port', '0', '--json'], { env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const first = await new Promise<string>((ok, fail) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        child.stdout!.off('data', onData);
        ok(out.slice(0, nl));
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => fail(new Error(`serve-env exited ${code}: ${err}`)));
  });
  const info = JSON.parse(first) as { url: string; port: number; token: string | null };
  return {
    child,
    ...info,
    stderr: () => err,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

/** A /ws session that answers each sent message with the next frame. */
export async function session(url: string, headers: Record<string, string> = {}): Promise<{ ws: WebSocket; ask(msg: unknown): Promise<Record<string, unknown>>; next(): Promise<Record<string, unknown>>; closed: Promise<void> }> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws`, { headers });
  const frames: Record<string, unknown>[] = [];
  const waiting: ((f: Record<string, unknown>) => void)[] = [];
  ws.on('message', (d) => {
    const f = JSON.parse(d.toString()) as Record<string, unknown>;
    const w = waiting.shift();
    if (w) w(f);
    else frames.push(f);
  });
  const closed = new Promise<void>((done) => ws.once('close', () => done()));
  await new Promise<void>((ok, fail) => {
    ws.once('open', () => ok());
    ws.once('error', fail);
  });
  const next = () => new Promise<Record<string, unknown>>((ok) => (frames.length ? ok(frames.shift()!) : waiting.push(ok)));
  return {
    ws,
    next,
    closed,
    ask: (msg) => {
      ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg));
      return next();
    },
  };
}

export function python(venv: string, args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((done) => {
    execFile(join(venv, 'bin', 'python'), args, { maxBuffer: 64 * 1024 * 1024, timeout: 120_000 }, (e, out, err) => done({ code: e ? ((e as { code?: number }).code ?? 1) : 0, out, err }));
  });
}

/**
 * The workbench's own replay of `game` (the CLI's `replay`, max 6 turns as the tests serve it) with
 * these actions from `seed`, hinted with `hintText` or not: what an OpenEnv play must equal.
 */
export async function cliReplay(dir: string, game: string, hintText: string, seed: number, actions: string[], hint: boolean): Promise<StepView[]> {
  const acts = join(dir, `acts-${seed}-${hint}-${Date.now()}.txt`);
  writeFileSync(acts, actions.map((a) => JSON.stringify(a)).join('\n'));
  const hintFile = join(dir, `hint-${seed}.txt`);
  writeFileSync(hintFile, hintText);
  const r = await runCli(['replay', game, '--max-turns', '6', '--seed', String(seed), '--actions', acts, ...(hint ? ['--hint-file', hintFile] : []), '--json']);
  if (r.code !== 0) throw new Error(`replay exited ${r.code}: ${r.err}`);
  return (JSON.parse(r.out) as { episodes: { steps: StepView[] }[] }).episodes[0]!.steps;
}
