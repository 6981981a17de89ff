import { mkdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join } from 'node:path';

/**
 * What probing an interpreter found, kept in a file so that a process that starts cold (the CLI)
 * does not pay for a Python start and a numpy import (about a quarter of a second) each time.
 * An entry holds only while nothing it depends on has changed: the interpreter's file (path,
 * size, mtime, inode) and the mtime of every directory the probe listed (installing or removing
 * a package changes its site-packages directory), under the same PATH.
 */
export interface ProbeCacheEntry<T> {
  stamp: string;
  dirs: string[];
  dirStamps: string[];
  info: T | null;
}

interface CacheFile<T> {
  version: 1;
  entries: Record<string, ProbeCacheEntry<T>>;
}

/** An interpreter named bare ('python3') is the one PATH finds, as spawn would find it. */
function resolveOnPath(cmd: string): string | null {
  if (isAbsolute(cmd)) return cmd;
  if (cmd.includes('/')) return null;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, cmd);
    try {
      if (statSync(p).isFile()) return p;
    } catch {
      // not in this directory
    }
  }
  return null;
}

/** Everything the interpreter's own file says of it; null when there is no such file. */
export function interpreterStamp(cmd: string): string | null {
  const p = resolveOnPath(cmd);
  if (!p) return null;
  try {
    const real = realpathSync(p);
    const st = statSync(real);
    return `${p}|${real}|${st.size}|${st.mtimeMs}|${st.ino}|${process.env.PATH ?? ''}`;
  } catch {
    return null;
  }
}

function dirStamp(d: string): string {
  try {
    return `${d}|${statSync(d).mtimeMs}`;
  } catch {
    return `${d}|gone`;
  }
}

function load<T>(file: string): CacheFile<T> {
  try {
    const j = JSON.parse(readFileSync(file, 'utf8')) as CacheFile<T>;
    if (j && j.version === 1 && j.entries && typeof j.entries === 'object') return j;
  } catch {
    // absent or unreadable: an empty cache
  }
  return { version: 1, entries: {} };
}

/** The cached probe of `cmd`, or undefined when there is none that still holds. */
export function cachedProbe<T>(file: string, cmd: string): { hit: true; info: T | null } | { hit: false; stamp: string | null } {
  const stamp = interpreterStamp(cmd);
  if (stamp === null) return { hit: false, stamp };
  const e = load<T>(file).entries[cmd];
  if (!e || e.stamp !== stamp || !Array.isArray(e.dirs) || !Array.isArray(e.dirStamps)) return { hit: false, stamp };
  if (e.dirs.length !== e.dirStamps.length || e.dirs.some((d, i) => dirStamp(d) !== e.dirStamps[i])) return { hit: false, stamp };
  return { hit: true, info: e.info };
}

/** Keeps a probe's answer; a cache that cannot be written only costs the next start its probe. */
export function storeProbe<T>(file: string, cmd: string, stamp: string, dirs: string[], info: T | null): void {
  try {
    const c = load<T>(file);
    c.entries[cmd] = { stamp, dirs, dirStamps: dirs.map(dirStamp), info };
    mkdirSync(dirname(file), { recursive: true });
    // Written aside and renamed: two CLIs starting at once never read half a file.
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(c));
    renameSync(tmp, file);
  } catch {
    // read-only data directory: probe again next time
  }
}
