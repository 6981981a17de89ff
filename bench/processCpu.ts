import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time used by this process and every process under it, in ms (Linux /proc; null elsewhere).
 * A throughput row says how fast work went; this says what each unit of it cost the machine, the
 * figure that bounds throughput once every core is busy. Each CPU second is counted once: a live
 * process's own time plus what the children it has already reaped used (cutime, cstime). Take
 * both readings while the processes doing the work are alive (before a pool is closed).
 */
export function treeCpuMs(): number | null {
  if (process.platform !== 'linux') return null;
  const parent = new Map<number, number>();
  const ticks = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return null;
  }
  for (const d of entries) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces and parentheses): state ppid ... utime(11) stime cutime cstime.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(d), Number(f[1]));
      ticks.set(Number(d), Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]));
    } catch {
      // exited meanwhile: its time is in its parent's cutime once reaped
    }
  }
  const mine = (pid: number): boolean => {
    for (let p: number | undefined = pid, hops = 0; p !== undefined && p > 0 && hops < 64; p = parent.get(p), hops++) if (p === process.pid) return true;
    return false;
  };
  let total = 0;
  for (const [pid, t] of ticks) if (mine(pid)) total += t;
  return (total * 1000) / clockTicks();
}

let hz: number | undefined;
function clockTicks(): number {
  if (hz === undefined) {
    try {
      hz = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      hz = 100;
    }
  }
  return hz;
}
