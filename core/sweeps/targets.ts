import { cpus } from 'node:os';
import { join } from 'node:path';
import { DomainError } from '../errors';
import { probePython } from '../runtime/native';
import type { Db } from '../memory/db';
import type { SshTarget } from '../jobs/types';
import type { SweepExecutor } from './executor';
import { RayExecutor } from './rayExecutor';
import { SlurmExecutor } from './slurmExecutor';
import { savedJobHosts } from './sweepStore';

/** Where `--on` sends a sweep; kept with the sweep so that a resume or a cancel reaches the same place. */
export type SweepTarget = { kind: 'local' } | { kind: 'ray'; address: string } | { kind: 'slurm'; host: string };

/** What a target needs beyond its address; kept with the sweep. */
export interface DispatchSettings {
  workers: number;
  shardSize: number;
  envTimeoutSec: number;
  /** The interpreter the nodes sandbox games with (a path there). */
  python: string;
  rayPython?: string | undefined;
  sshKey?: string | undefined;
  knownHosts?: string | undefined;
}

/** `local`, `ray://HOST:PORT` (the head's dashboard, Jobs API), `slurm:HOST` (a job host reached by SSH). */
export function parseTarget(on: string | undefined): SweepTarget {
  if (on === undefined || on === 'local') return { kind: 'local' };
  const ray = /^ray:\/\/([^/\s]+)\/?$/.exec(on);
  if (ray) {
    const hostPort = ray[1]!;
    const url = new URL(`http://${hostPort}`);
    if (!url.port) url.port = '8265';
    return { kind: 'ray', address: url.origin };
  }
  const slurm = /^slurm:(\S+)$/.exec(on);
  if (slurm) return { kind: 'slurm', host: slurm[1]! };
  throw new Error(`--on must be local, ray://HOST:PORT (a Ray head's dashboard) or slurm:HOST (a job host), got ${on}`);
}

export function targetLabel(t: SweepTarget): string {
  return t.kind === 'local' ? 'local' : t.kind === 'ray' ? `ray://${new URL(t.address).host}` : `slurm:${t.host}`;
}

/**
 * The SSH target of `slurm:HOST`: the host of a job launched before (its port, user, key and known
 * hosts, as the jobs feature saved them), else `[user@]host[:port]` (or an ~/.ssh/config alias)
 * with the key and known-hosts file given on the command line.
 */
export function sshTargetFor(db: Db, host: string, s: DispatchSettings): SshTarget {
  for (const ssh of savedJobHosts(db) as SshTarget[]) {
    if ((ssh.host === host || `${ssh.user ? `${ssh.user}@` : ''}${ssh.host}${ssh.port ? `:${ssh.port}` : ''}` === host)) return ssh;
  }
  const m = /^(?:([^@\s]+)@)?([^:@\s]+)(?::(\d+))?$/.exec(host);
  if (!m) throw new Error(`slurm:${host}: not a host ([user@]host[:port] or an ~/.ssh/config alias)`);
  return { host: m[2]!, ...(m[3] ? { port: Number(m[3]) } : {}), ...(m[1] ? { user: m[1] } : {}), ...(s.sshKey ? { identityFile: s.sshKey } : {}), ...(s.knownHosts ? { knownHostsFile: s.knownHosts } : {}) };
}

/** A cluster target's executor, for any kind of sweep (each kind brings its own for this machine). */
export function remoteExecutor<R>(t: Exclude<SweepTarget, { kind: 'local' }>, s: DispatchSettings, db: Db, dataDir: string): SweepExecutor<R> {
  if (t.kind === 'ray') return new RayExecutor({ address: t.address, python: s.python, driverPython: s.rayPython, shardSize: s.shardSize, envTimeoutSec: s.envTimeoutSec });
  return new SlurmExecutor({ ssh: sshTargetFor(db, t.host, s), label: `slurm:${t.host}`, appKnownHosts: join(dataDir, 'ssh', 'known_hosts'), python: s.python, shardSize: s.shardSize, envTimeoutSec: s.envTimeoutSec });
}

/** A target as the API names it: `local`, a saved job host (Slurm over SSH), or a Ray head. */
export type TargetInput = { kind: 'local' } | { kind: 'slurm'; host: string } | { kind: 'ray'; address: string; python?: string | undefined };

/** `HOST:PORT`, `ray://HOST:PORT` or `http://HOST:PORT`, as parseTarget reads `--on ray://...`. */
function rayTarget(address: string): SweepTarget {
  const hostPort = address.trim().replace(/^(ray|https?):\/\//, '').replace(/\/$/, '');
  try {
    return parseTarget(`ray://${hostPort}`);
  } catch {
    throw new DomainError('invalid_input', `Not a Ray address: ${address} (give HOST:PORT of the head's dashboard, e.g. 127.0.0.1:8265)`);
  }
}

function hostLabel(h: SshTarget): string {
  return `${h.user ? `${h.user}@` : ''}${h.host}${h.port ? `:${h.port}` : ''}`;
}

/** The SSH targets of jobs launched before over SSH or Slurm, each once, newest first. */
export function jobHosts(db: Db): string[] {
  return [...new Set((savedJobHosts(db) as SshTarget[]).map(hostLabel))];
}

/**
 * A target as the API names it, checked, with what its work needs (the app's defaults, the CLI's:
 * one worker a core here, shards of 30, two minutes an environment). Shared by pool audits and
 * design rounds, so that both reach a target the same way.
 */
export function resolveTarget(db: Db, target: TargetInput): { target: SweepTarget; dispatch: DispatchSettings } {
  const t: SweepTarget = target.kind === 'local' ? { kind: 'local' } : target.kind === 'ray' ? rayTarget(target.address) : { kind: 'slurm', host: target.host };
  if (t.kind === 'slurm' && !jobHosts(db).includes(t.host) && !/^(?:[^@\s]+@)?[^:@\s]+(?::\d+)?$/.test(t.host)) throw new DomainError('invalid_input', `Not a job host: ${t.host}`);
  // This machine's audits find their own interpreter; a cluster's nodes are named this one's path (same image).
  const python = t.kind === 'local' ? '' : probePython()?.path;
  if (t.kind !== 'local' && python === undefined) throw new DomainError('unavailable', 'No Python here to name for the nodes (the work runs the interpreter this machine audits with)');
  return { target: t, dispatch: { workers: Math.max(1, cpus().length), shardSize: 30, envTimeoutSec: 120, python: python ?? '', ...(target.kind === 'ray' && target.python ? { rayPython: target.python } : {}) } };
}
