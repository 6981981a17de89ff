import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { DomainError } from '../errors';
import type { Db } from '../memory/db';
import { clearSweepOwner, getSweep, setSweepOwner, type SweepRow } from './sweepStore';

/**
 * Which process drives a sweep now. The app and the CLI (`audit --pool`, `regret --pool`) may share
 * one memory file; a sweep 'running' in the database is either driven by a process that is alive
 * (running elsewhere: its results keep arriving, and a second driver would submit its work twice) or
 * by none (interrupted: resumable). The owner is the process id with the host and the process's
 * start time, read from the kernel: a process killed with -9 leaves no owner alive at once (no lease
 * to wait out), and a later process given the same id has another start time.
 */
export interface SweepOwner {
  host: string;
  pid: number;
  /** The process's start time in clock ticks since boot (/proc/PID/stat field 22); null where there is no /proc. */
  start: string | null;
}

function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after its last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

let self: SweepOwner | null = null;
export function thisProcess(): SweepOwner {
  self ??= { host: hostname(), pid: process.pid, start: startTime(process.pid) };
  return self;
}

function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: alive, owned by another user.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the owner still runs. One on another host cannot be asked; a memory file is one machine's
 * (SQLite over a network share is not safe to write from two), so such an owner is a data folder
 * copied from where a sweep was cut off: not alive, or that sweep could never be resumed here.
 */
export function ownerAlive(o: SweepOwner): boolean {
  if (o.host !== hostname()) return false;
  if (!exists(o.pid)) return false;
  const now = startTime(o.pid);
  return o.start === null || now === null || now === o.start;
}

export const isThisProcess = (o: SweepOwner): boolean => {
  const me = thisProcess();
  return o.host === me.host && o.pid === me.pid && o.start === me.start;
};

export function describeOwner(o: SweepOwner): string {
  return `process ${o.pid}`;
}

/** The live owner of a sweep other than this process, or null. */
export function otherOwner(s: Pick<SweepRow, 'owner'>): SweepOwner | null {
  return s.owner && !isThisProcess(s.owner) && ownerAlive(s.owner) ? s.owner : null;
}

/** A sweep marked running whose driver is another live process. */
export function sweepRunningElsewhere(db: Db, id: string): boolean {
  const s = getSweep(db, id);
  return !!s && s.state === 'running' && otherOwner(s) !== null;
}

export function refuseIfOwned(db: Db, id: string, label: string, what: 'resumed' | 'cancelled' = 'resumed'): void {
  const s = getSweep(db, id);
  const o = s ? otherOwner(s) : null;
  if (!o) return;
  const why = what === 'resumed' ? 'its environments would count twice' : 'it would go on there; stop it there (Ctrl-C)';
  throw new DomainError('conflict', `${label} ${id} is running in ${describeOwner(o)}; it cannot be ${what} here while it runs there (${why})`);
}

/**
 * Runs fn as the sweep's only driver: refused while another live process drives it; the owner is
 * written before any work is submitted and cleared when this process stops driving it (a crash
 * leaves it, and ownerAlive then says no one owns it).
 */
export async function asOwner<T>(db: Db, id: string, label: string, fn: () => Promise<T>): Promise<T> {
  db.transaction(() => {
    refuseIfOwned(db, id, label);
    setSweepOwner(db, id, thisProcess());
  }).immediate();
  try {
    return await fn();
  } finally {
    clearSweepOwner(db, id, thisProcess());
  }
}
