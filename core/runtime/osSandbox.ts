import { spawn, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * The OS-level sandbox for native CPython: Debian's bubblewrap with new user, pid, network, ipc and
 * uts namespaces, an unprivileged uid inside, read-only binds of only the interpreter (and its
 * site-packages) and the harness, a private /tmp, no home, no /etc beyond the loader cache, no host
 * sockets. Without it, native runs are refused unless the user allows them (setting
 * `allowUnsandboxedNative`, or SPADE_ALLOW_UNSANDBOXED_NATIVE=1 for the CLI).
 */
export interface OsSandboxStatus {
  available: boolean;
  /** One sentence: what wraps native runs, or why nothing can. */
  detail: string;
  bwrap?: string;
}

/** Where the harness appears inside the sandbox. */
export const SANDBOX_HARNESS_DIR = '/opt/spade/native';

export const REFUSAL_SETTING = 'allowUnsandboxedNative';

let probed: OsSandboxStatus | undefined;

// --as-pid-1: the fork server is the sandbox's init. Otherwise bubblewrap's own pid 1 sits beside
// the games, dumpable and with the host's pipes as its stdio: a game read its memory and opened
// those pipes through /proc/1 (issue 46). The server reaps what it inherits (host_zygote.reap_orphans).
const BASE_FLAGS = [
  '--unshare-user', '--unshare-pid', '--as-pid-1', '--unshare-net', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try',
  '--die-with-parent', '--new-session', '--uid', '65534', '--gid', '65534', '--hostname', 'spade-sandbox',
];

/** SPADE_BWRAP, when set, is the only candidate (tests point it at nothing to see the refusal). */
function findBwrap(): string | null {
  const candidates = process.env.SPADE_BWRAP ? [process.env.SPADE_BWRAP] : ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'];
  return candidates.find((p) => existsSync(p)) ?? null;
}

/** Whether bubblewrap can make the namespaces here (it cannot where user namespaces are disabled). */
export function probeOsSandbox(force = false): OsSandboxStatus {
  if (probed && !force) return probed;
  const pre = preflight();
  if ('status' in pre) return (probed = pre.status);
  const r = spawnSync(pre.bwrap, pre.args, { timeout: 10_000, encoding: 'utf8' });
  return (probed = verdict(pre.bwrap, r.status, r.stderr, r.error?.message));
}

/**
 * The same probe without blocking the event loop: a process that starts cold (the CLI) loads its
 * modules while bubblewrap tries its namespaces. Fills the cache probeOsSandbox() reads.
 */
export function probeOsSandboxAsync(): Promise<OsSandboxStatus> {
  if (probed) return Promise.resolve(probed);
  const pre = preflight();
  if ('status' in pre) return Promise.resolve((probed = pre.status));
  return new Promise((resolve) => {
    let stderr = '';
    let settled = false;
    const done = (code: number | null, error?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // A synchronous probe that ran meanwhile has already answered: keep its answer.
      resolve((probed ??= verdict(pre.bwrap, code, stderr, error)));
    };
    const p = spawn(pre.bwrap, pre.args, { stdio: ['ignore', 'ignore', 'pipe'] });
    const timer = setTimeout(() => {
      p.kill('SIGKILL');
      done(null, 'timed out after 10 s');
    }, 10_000);
    timer.unref();
    p.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    p.on('error', (e) => done(null, e.message));
    p.on('close', (code) => done(code));
  });
}

function preflight(): { status: OsSandboxStatus } | { bwrap: string; args: string[] } {
  if (process.platform !== 'linux') {
    return { status: { available: false, detail: `no OS sandbox for native runs on ${process.platform === 'darwin' ? 'macOS' : process.platform === 'win32' ? 'Windows' : process.platform} (bubblewrap needs Linux)` } };
  }
  const bwrap = findBwrap();
  if (!bwrap) return { status: { available: false, detail: 'bubblewrap (bwrap) is not installed; on Debian or Ubuntu: apt install bubblewrap' } };
  return { bwrap, args: [...BASE_FLAGS, ...systemBinds(), '--proc', '/proc', '--dev', '/dev', 'true'] };
}

function verdict(bwrap: string, code: number | null, stderr: string | null | undefined, error: string | undefined): OsSandboxStatus {
  if (code !== 0) {
    const why = (stderr || error || `exit ${code}`).trim().split('\n').pop() ?? '';
    return { available: false, bwrap, detail: `bubblewrap cannot create namespaces here (${why.slice(0, 200)}); user namespaces may be disabled` };
  }
  return { available: true, bwrap, detail: 'bubblewrap: own user, pid, network, ipc and uts namespaces; read-only interpreter; private /tmp; seccomp per session' };
}

/** /usr read-only, and /lib, /bin ... as on the host (symlinks on merged-/usr systems, binds elsewhere). */
function systemBinds(): string[] {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const top of ['/lib', '/lib64', '/lib32', '/bin', '/sbin']) {
    let st;
    try {
      st = lstatSync(top);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) args.push('--symlink', readlinkSync(top), top);
    else if (st.isDirectory()) args.push('--ro-bind', top, top);
  }
  // The dynamic loader's cache and the time zone: no secrets, and some libraries look for them.
  // /etc/alternatives holds Debian's links to the BLAS numpy loads.
  for (const f of ['/etc/ld.so.cache', '/etc/localtime', '/etc/alternatives']) if (existsSync(f)) args.push('--ro-bind', f, f);
  return args;
}

/** The directories an interpreter needs, outside /usr: its prefix, its venv, its site-packages. */
export function interpreterBinds(pythonDirs: readonly string[]): string[] {
  const out = new Set<string>();
  for (const d of pythonDirs) {
    if (!d || !existsSync(d)) continue;
    let real: string;
    try {
      real = realpathSync(d);
    } catch {
      continue;
    }
    for (const p of [d, real]) {
      if (p === '/' || p === '/tmp' || p.startsWith('/usr/') || p === '/usr' || p.startsWith('/proc')) continue;
      out.add(p);
    }
  }
  // A parent bound before a child covers it: keep only the outermost paths.
  const sorted = [...out].sort();
  const kept = sorted.filter((p, i) => !sorted.slice(0, i).some((q) => p.startsWith(q.endsWith('/') ? q : `${q}/`)));
  return kept.flatMap((p) => ['--ro-bind', p, p]);
}

export interface SandboxCommand {
  cmd: string;
  args: string[];
  env: Record<string, string>;
}

/** The bwrap command line that runs `python <harness>/cpython_main.py <config>` inside the sandbox. */
export function sandboxedPython(opts: { python: string; pythonDirs: readonly string[]; nativeDir: string; config: string; env: Record<string, string> }, bwrapPath?: string): SandboxCommand {
  let bwrap = bwrapPath;
  if (!bwrap) {
    const st = probeOsSandbox();
    if (!st.available || !st.bwrap) throw new Error(st.detail);
    bwrap = st.bwrap;
  }
  const args = [
    ...BASE_FLAGS,
    ...systemBinds(),
    // /tmp first: an interpreter that lives under /tmp (a test's venv) is bound over it below.
    '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp',
    ...interpreterBinds([...opts.pythonDirs, dirname(opts.python)]),
    '--ro-bind', opts.nativeDir, SANDBOX_HARNESS_DIR,
    '--chdir', '/tmp',
    '--clearenv',
    ...Object.entries({ HOME: '/tmp', ...opts.env }).flatMap(([k, v]) => ['--setenv', k, v]),
    opts.python, '-s', `${SANDBOX_HARNESS_DIR}/cpython_main.py`, opts.config,
  ];
  return { cmd: bwrap, args, env: {} };
}

/**
 * The bubblewrap a sandboxed start would use, before the probe has said whether it can make its
 * namespaces here (null off Linux or when it is not installed). Only for a start that runs inside
 * it whatever the probe says: if bwrap cannot sandbox, that start fails; it never runs unsandboxed.
 */
export function bwrapCandidate(): string | null {
  return process.platform === 'linux' ? findBwrap() : null;
}

/** The error for a native run that cannot be sandboxed and is not allowed without. */
export function refusal(st: OsSandboxStatus = probeOsSandbox()): string {
  return `Native CPython runs are refused: ${st.detail}. To run them without an OS sandbox anyway, turn on the setting ${REFUSAL_SETTING} (or set SPADE_ALLOW_UNSANDBOXED_NATIVE=1 for the CLI).`;
}
