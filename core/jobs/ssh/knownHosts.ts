import { createHash, createHmac } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** OpenSSH's SHA256 fingerprint of a raw public key blob, as `ssh-keygen -l` prints it. */
export function fingerprint(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
}

export function keyType(key: Buffer): string {
  if (key.length < 4) return 'unknown';
  const len = key.readUInt32BE(0);
  return key.subarray(4, 4 + len).toString('ascii');
}

/** The name known_hosts uses: bare host on port 22, `[host]:port` otherwise. */
export function knownHostsName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

function hostMatches(field: string, name: string): boolean {
  if (field.startsWith('|1|')) {
    const [, , salt, hash] = field.split('|');
    if (!salt || !hash) return false;
    return createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64') === hash;
  }
  return field.split(',').some((p) => {
    if (p.startsWith('!')) return false;
    const re = new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`, 'i');
    return re.test(name);
  });
}

export type HostKeyVerdict = { kind: 'known' } | { kind: 'unknown' } | { kind: 'changed'; file: string; line: number };

/**
 * Checks a host key against known_hosts files. A matching name with the same key type and a
 * different key is a change (refused); a name absent for that key type is unknown (asks the user).
 */
export function checkHostKey(files: string[], host: string, port: number, key: Buffer): HostKeyVerdict {
  const name = knownHostsName(host, port);
  const type = keyType(key);
  const b64 = key.toString('base64');
  let changed: HostKeyVerdict | null = null;
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    const lines = text.split(/\r?\n/);
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!.trim();
      if (!line || line.startsWith('#')) continue;
      let parts = line.split(/\s+/);
      let marker = '';
      if (parts[0]!.startsWith('@')) {
        marker = parts[0]!;
        parts = parts.slice(1);
      }
      const [hosts, t, data] = parts;
      if (!hosts || !t || !data) continue;
      if (!hostMatches(hosts, name)) continue;
      if (marker === '@revoked' && data === b64) return { kind: 'changed', file, line: i + 1 };
      if (marker) continue;
      if (t !== type) continue;
      if (data === b64) return { kind: 'known' };
      changed ??= { kind: 'changed', file, line: i + 1 };
    }
  }
  return changed ?? { kind: 'unknown' };
}

export function appendKnownHost(file: string, host: string, port: number, key: Buffer): void {
  mkdirSync(dirname(file), { recursive: true });
  appendFileSync(file, `${knownHostsName(host, port)} ${keyType(key)} ${key.toString('base64')}\n`, { mode: 0o600 });
}
