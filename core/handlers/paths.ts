import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { DomainError } from '../errors';

/**
 * Paths a person types on this machine, read the way their shell would: `~` and `~/…` are their
 * home. Every handler that takes a local path sends it through here once, so `~/runs` works in the
 * import dialog, the export folder and an SSH key file alike. (`~user` is not expanded: it would
 * need the password database, and a folder may really be named so; it stays relative.)
 * Paths on a job's machine are not local: the jobs layer resolves them against that machine's home.
 */
export function expandHome(p: string, home: string = homedir()): string {
  if (p === '~') return home;
  if (p.startsWith('~/') || (process.platform === 'win32' && p.startsWith('~\\'))) return join(home, p.slice(2));
  return p;
}

/** A local path as the engine uses it: `~` expanded, then absolute; an empty one is refused in words. */
export function localPath(p: string): string {
  const t = p.trim();
  if (!t) throw new DomainError('invalid_input', 'A path cannot be empty.');
  const e = expandHome(t);
  return resolve(e);
}

/** The local files an SSH target names (key, extra known_hosts), expanded; the host is left alone. */
export function sshLocalPaths<T extends { identityFile?: string | undefined; knownHostsFile?: string | undefined }>(ssh: T): T;
export function sshLocalPaths<T extends { identityFile?: string | undefined; knownHostsFile?: string | undefined }>(ssh: T | undefined): T | undefined;
export function sshLocalPaths<T extends { identityFile?: string | undefined; knownHostsFile?: string | undefined }>(ssh: T | undefined): T | undefined {
  if (!ssh) return ssh;
  return {
    ...ssh,
    ...(ssh.identityFile ? { identityFile: localPath(ssh.identityFile) } : {}),
    ...(ssh.knownHostsFile ? { knownHostsFile: localPath(ssh.knownHostsFile) } : {}),
  };
}
