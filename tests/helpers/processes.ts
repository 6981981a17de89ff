import { readdirSync, readFileSync } from 'node:fs';

/** A process as /proc shows it. */
export interface Proc {
  pid: number;
  ppid: number;
  /** R, S, Z ... (Z: exited and not reaped yet) */
  state: string;
  cmd: string;
}

/** Every process this test can see in /proc. */
export function processes(): Proc[] {
  const out: Proc[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push({ pid: Number(d), ppid: Number(rest[1]), state: rest[0]!, cmd: readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ') });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The processes under this one, at any depth. */
export function descendants(all = processes()): Proc[] {
  const byPid = new Map(all.map((p) => [p.pid, p]));
  return all.filter((p) => {
    for (let q = byPid.get(p.ppid); q; q = byPid.get(q.ppid)) if (q.pid === process.pid) return true;
    return false;
  });
}

/** This process's native fork server (the Python process, not the bubblewrap around it); throws if none. */
export function forkServer(all = descendants()): Proc {
  const byPid = new Map(all.map((p) => [p.pid, p]));
  const python = (p: Proc | undefined): boolean => !!p && p.cmd.includes('cpython_main.py') && !p.cmd.split(' ')[0]!.endsWith('bwrap');
  const server = all.find((p) => python(p) && !python(byPid.get(p.ppid)));
  if (!server) throw new Error('no fork server among this process’s descendants');
  return server;
}
