import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Whether this process holds the TCP connection from `localPort` to `remotePort` (Linux /proc). */
export function heldHere(localPort: number, remotePort: number): boolean {
  const inodes = new Set<string>();
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(f)) continue;
    for (const line of readFileSync(f, 'utf8').split('\n').slice(1)) {
      const c = line.trim().split(/\s+/);
      if (c.length < 10) continue;
      const port = (a: string) => parseInt(a.slice(a.lastIndexOf(':') + 1), 16);
      if (port(c[1]!) === localPort && port(c[2]!) === remotePort && c[9] !== '0') inodes.add(c[9]!);
    }
  }
  if (inodes.size === 0) return false;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (m && inodes.has(m[1]!)) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}
