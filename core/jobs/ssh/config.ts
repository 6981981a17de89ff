import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** What ~/.ssh/config says about one host, after OpenSSH's first-match-wins rule. */
export interface SshHostConfig {
  alias: string;
  hostName: string;
  user?: string;
  port?: number;
  identityFiles: string[];
  userKnownHostsFiles: string[];
  identityAgent?: string;
}

function globToRegExp(p: string): RegExp {
  return new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`, 'i');
}

function matches(patterns: string[], host: string): boolean {
  let hit = false;
  for (const raw of patterns) {
    const neg = raw.startsWith('!');
    const re = globToRegExp(neg ? raw.slice(1) : raw);
    if (re.test(host)) {
      if (neg) return false;
      hit = true;
    }
  }
  return hit;
}

function expandPath(p: string, host: string, user: string | undefined): string {
  let s = p.replace(/^~(?=\/|$)/, homedir());
  s = s.replace(/%d/g, homedir()).replace(/%h/g, host).replace(/%u/g, user ?? '').replace(/%%/g, '%');
  return s;
}

function tokens(line: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|(\S+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(line))) out.push(m[1] ?? m[2] ?? '');
  return out;
}

export function defaultSshConfigPath(): string {
  return process.env.SPADE_SSH_CONFIG || join(homedir(), '.ssh', 'config');
}

/** Host aliases a user can pick in the launch dialog (patterns with wildcards left out). */
export function listConfigHosts(text: string): string[] {
  const out = new Set<string>();
  for (const line of text.split(/\r?\n/)) {
    const t = tokens(line.replace(/#.*/, '').trim());
    if (t.length > 1 && t[0]!.toLowerCase() === 'host') for (const h of t.slice(1)) if (!/[*?!]/.test(h)) out.add(h);
  }
  return [...out];
}

export function resolveSshConfig(text: string, alias: string): SshHostConfig {
  const cfg: SshHostConfig = { alias, hostName: alias, identityFiles: [], userKnownHostsFiles: [] };
  const seen = new Set<string>();
  let active = true;
  for (const line of text.split(/\r?\n/)) {
    const t = tokens(line.replace(/(^|\s)#.*/, '').trim());
    if (t.length === 0) continue;
    const [rawKey, ...rest] = t;
    const key = rawKey!.replace(/=$/, '').toLowerCase();
    const value = rest.join(' ').replace(/^=\s*/, '');
    if (key === 'host') {
      active = matches(rest, alias);
      continue;
    }
    if (key === 'match') {
      active = rest[0]?.toLowerCase() === 'all';
      continue;
    }
    if (!active) continue;
    if (key === 'identityfile') {
      cfg.identityFiles.push(value);
      continue;
    }
    if (key === 'userknownhostsfile') {
      if (!seen.has(key)) cfg.userKnownHostsFiles.push(...rest);
      seen.add(key);
      continue;
    }
    if (seen.has(key)) continue;
    seen.add(key);
    if (key === 'hostname') cfg.hostName = value.replace(/%h/g, alias);
    else if (key === 'user') cfg.user = value;
    else if (key === 'port') {
      const n = Number(value);
      if (Number.isInteger(n) && n > 0 && n < 65536) cfg.port = n;
    } else if (key === 'identityagent') cfg.identityAgent = value;
  }
  cfg.identityFiles = cfg.identityFiles.map((p) => expandPath(p, cfg.hostName, cfg.user));
  cfg.userKnownHostsFiles = cfg.userKnownHostsFiles.map((p) => expandPath(p, cfg.hostName, cfg.user));
  if (cfg.identityAgent) cfg.identityAgent = expandPath(cfg.identityAgent, cfg.hostName, cfg.user);
  return cfg;
}

export function readSshConfig(path = defaultSshConfigPath()): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
