import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, posix } from 'node:path';
import ssh2, { type AgentAuthMethod, type AuthMethod, type Client as SshClient, type PublicKeyAuthMethod, type ClientChannel, type ConnectConfig, type SFTPWrapper } from 'ssh2';

// ssh2 is CommonJS: named imports fail under Node's ESM loader (the built CLI), the default works.
const { Client, utils } = ssh2;
type Client = SshClient;
import type { FileEntry, LogChunk, SshTarget, Transport } from '../types';
import { readSshConfig, resolveSshConfig } from './config';
import { DomainError, isUnreachable } from '../../errors';
import { errorMessage } from '../../api/errors';
import { checkHostKey, fingerprint, keyType } from './knownHosts';

/** A host key the user has not trusted yet: shown with its fingerprint, accepted only explicitly. */
export class HostKeyError extends DomainError {
  constructor(
    readonly kind: 'unknown' | 'changed',
    readonly host: string,
    readonly port: number,
    readonly keyType: string,
    readonly fingerprint: string,
    readonly key: Buffer,
    detail: string,
  ) {
    // `unauthorized` with the key's identity: the UI asks the person to confirm this very key.
    super('unauthorized', detail, { hostKey: { status: kind, host, port, keyType, fingerprint } });
    this.name = 'HostKeyError';
  }
}

export interface SshOptions {
  /** The workbench's own known_hosts (keys the user accepted in the app). */
  appKnownHosts: string;
  configText?: string;
  readyTimeoutMs?: number;
}

export interface ResolvedTarget {
  host: string;
  port: number;
  user: string;
  keys: { path: string; key: Buffer }[];
  agent: string | undefined;
  knownHosts: string[];
}

/** A path typed in a form: `~` and `~/…` are this machine's home, where the SSH client runs. */
export function expandHome(p: string): string {
  const s = p.trim();
  return s === '~' ? homedir() : s.startsWith('~/') ? join(homedir(), s.slice(2)) : s;
}

/**
 * The key file a person named, checked before any connection: a missing, unreadable or non-key file
 * is their typo to fix, said as such, not an anonymous authentication failure later. A key with a
 * passphrase is left to the agent (ssh2 cannot ask for it), as before.
 */
function namedKey(path: string): { path: string; key: Buffer } | null {
  let key: Buffer;
  try {
    key = readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new DomainError('invalid_input', `The key file ${path} ${code === 'ENOENT' ? 'does not exist' : code === 'EISDIR' ? 'is a folder, not a key' : `cannot be read (${code ?? 'error'})`}`);
  }
  const parsed = utils.parseKey(key);
  if (!(parsed instanceof Error)) {
    const first = Array.isArray(parsed) ? parsed[0] : parsed;
    if (first && !first.isPrivateKey()) throw new DomainError('invalid_input', `The key file ${path} holds a public key: name the private key (usually the same path without .pub)`);
    return { path, key };
  }
  if (/passphrase|encrypted/i.test(parsed.message)) return null;
  throw new DomainError('invalid_input', `The key file ${path} is not a private key SSH can use (${parsed.message})`);
}

export function resolveTarget(t: SshTarget, opts: SshOptions): ResolvedTarget {
  const cfg = resolveSshConfig(opts.configText ?? readSshConfig(), t.host);
  const home = homedir();
  const identity = t.identityFile?.trim() ? expandHome(t.identityFile) : null;
  const named = identity ? namedKey(identity) : null;
  const candidates = [
    ...cfg.identityFiles,
    ...(cfg.identityFiles.length === 0 && !identity
      ? ['id_ed25519', 'id_ecdsa', 'id_rsa'].map((n) => join(home, '.ssh', n))
      : []),
  ];
  const keys: { path: string; key: Buffer }[] = named ? [named] : [];
  for (const path of candidates) {
    if (!existsSync(path)) continue;
    try {
      const key = readFileSync(path);
      // Passphrase-protected keys are left to the agent; ssh2 would fail on them without one.
      const parsed = utils.parseKey(key);
      if (parsed instanceof Error) continue;
      keys.push({ path, key });
    } catch {
      continue;
    }
  }
  const agent = cfg.identityAgent && cfg.identityAgent !== 'none' ? cfg.identityAgent : process.env.SSH_AUTH_SOCK;
  return {
    host: cfg.hostName,
    port: t.port ?? cfg.port ?? 22,
    user: t.user ?? cfg.user ?? process.env.USER ?? 'root',
    keys,
    agent: agent || undefined,
    knownHosts: [
      ...(t.knownHostsFile ? [expandHome(t.knownHostsFile)] : []),
      ...(cfg.userKnownHostsFiles.length ? cfg.userKnownHostsFiles : [join(home, '.ssh', 'known_hosts')]),
      opts.appKnownHosts,
    ],
  };
}

/**
 * One SSH connection per host, opened on demand and re-opened after a drop with exponential
 * back-off (so a flapping link is not hammered), with one SFTP session on it.
 */
export class SshConnection implements Transport {
  readonly label: string;
  private client: Client | null = null;
  /** Rejects when a client's link closes: every operation on it races this, so none waits forever on a dead link. */
  private readonly lost = new WeakMap<Client, Promise<never>>();
  private connecting: Promise<Client> | null = null;
  private sftpSession: Promise<SFTPWrapper> | null = null;
  private sftpOwner: Client | null = null;
  private failures = 0;
  private nextAttemptAt = 0;
  private closed = false;
  /** How many times a connection was established; tests use it to see a reconnection happened. */
  connects = 0;
  /** How many forwarded streams were opened (tests: proof that traffic went through the tunnel). */
  forwards = 0;

  /** Whether a link is up now (false after a drop until the next operation reconnects). */
  get connected(): boolean {
    return this.client !== null;
  }

  constructor(
    readonly target: SshTarget,
    private readonly opts: SshOptions,
  ) {
    this.label = `${target.user ? `${target.user}@` : ''}${target.host}${target.port ? `:${target.port}` : ''}`;
  }

  private backoffMs(): number {
    return Math.min(15_000, 250 * 2 ** Math.max(0, this.failures - 1));
  }

  async connect(): Promise<Client> {
    if (this.closed) throw new DomainError('unavailable', `SSH connection to ${this.label} was closed`);
    if (this.client) return this.client;
    if (this.connecting) return this.connecting;
    const wait = this.nextAttemptAt - Date.now();
    this.connecting = (async () => {
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      try {
        const c = await this.open();
        const lost = new Promise<never>((_, reject) => c.once('close', () => reject(new DomainError('unavailable', `SSH connection to ${this.label} closed`))));
        lost.catch(() => undefined);
        this.lost.set(c, lost);
        this.failures = 0;
        this.connects++;
        return c;
      } catch (e) {
        this.failures++;
        this.nextAttemptAt = Date.now() + this.backoffMs();
        throw e;
      } finally {
        this.connecting = null;
      }
    })();
    return this.connecting;
  }

  private open(): Promise<Client> {
    const r = resolveTarget(this.target, this.opts);
    return new Promise((resolve, reject) => {
      const c = new Client();
      let verdictError: HostKeyError | null = null;
      const methods: (AgentAuthMethod | PublicKeyAuthMethod)[] = [];
      if (r.agent) methods.push({ type: 'agent', username: r.user, agent: r.agent });
      for (const k of r.keys) methods.push({ type: 'publickey', username: r.user, key: k.key });
      const auth = methods as unknown as AuthMethod[];
      const cfg: ConnectConfig = {
        host: r.host,
        port: r.port,
        username: r.user,
        readyTimeout: this.opts.readyTimeoutMs ?? 15_000,
        keepaliveInterval: 10_000,
        keepaliveCountMax: 3,
        authHandler: auth,
        hostVerifier: (key: Buffer) => {
          const verdict = checkHostKey(r.knownHosts, r.host, r.port, key);
          if (verdict.kind === 'known') return true;
          const fp = fingerprint(key);
          verdictError =
            verdict.kind === 'unknown'
              ? new HostKeyError('unknown', r.host, r.port, keyType(key), fp, key,
                  `The host key of ${r.host}:${r.port} is not known (${keyType(key)} ${fp}). Check the fingerprint and accept it explicitly to connect.`)
              : new HostKeyError('changed', r.host, r.port, keyType(key), fp, key,
                  `The host key of ${r.host}:${r.port} has CHANGED (now ${keyType(key)} ${fp}; ${verdict.file} line ${verdict.line} has another). ` +
                    'Connection refused: this can be an attack. If the change is expected, remove the old entry from that file yourself.');
          return false;
        },
      };
      c.once('ready', () => {
        this.client = c;
        c.on('close', () => {
          if (this.client === c) {
            this.client = null;
            this.sftpSession = null;
          }
        });
        resolve(c);
      });
      c.once('error', (e) => {
        c.removeAllListeners('ready');
        if (this.client === c) {
          this.client = null;
          this.sftpSession = null;
        }
        reject(verdictError ?? e);
      });
      c.on('error', () => undefined);
      c.connect(cfg);
    });
  }

  /** Cuts the link abruptly, as a network drop would (used by the resume tests and `reconnect`). */
  drop(): void {
    const c = this.client;
    this.client = null;
    this.sftpSession = null;
    c?.destroy();
  }

  /** `op` unless the client's link closes first (ssh2 does not always call back on a destroyed link). */
  /**
   * Races an operation against the link's loss; what ssh2 and SFTP reject with (a status code, a
   * channel error) becomes an `unavailable` DomainError naming the host, so it reaches the person as
   * the remote's answer rather than as an internal error. Unreachable-network errors keep their
   * structural codes for isUnreachable().
   */
  private onLink<T>(c: Client, op: Promise<T>): Promise<T> {
    const lost = this.lost.get(c);
    return (lost ? Promise.race([op, lost]) : op).catch((e: unknown) => {
      if (e instanceof DomainError || isUnreachable(e)) throw e;
      throw new DomainError('unavailable', `${this.label}: ${errorMessage(e)}`);
    });
  }

  private async sftp(): Promise<{ s: SFTPWrapper; c: Client }> {
    const c = await this.connect();
    if (!this.sftpSession || this.sftpOwner !== c) {
      this.sftpOwner = c;
      this.sftpSession = this.onLink(c, new Promise<SFTPWrapper>((resolve, reject) => c.sftp((err, s) => (err ? reject(err) : resolve(s)))));
      this.sftpSession.catch(() => (this.sftpSession = null));
    }
    return { s: await this.sftpSession, c };
  }

  async exec(command: string, opts: { stdin?: string; signal?: AbortSignal } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
    const c = await this.connect();
    return this.onLink(c, new Promise((resolve, reject) => {
      c.exec(command, (err: Error | undefined, stream: ClientChannel) => {
        if (err) return reject(err);
        let stdout = '';
        let stderr = '';
        let code = -1;
        stream.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
        stream.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
        stream.on('exit', (c2: number | null) => (code = c2 ?? -1));
        stream.on('close', () => resolve({ code, stdout, stderr }));
        stream.on('error', reject);
        stream.end(opts.stdin ?? '');
      });
    }));
  }

  async readChunk(path: string, offset: number, max: number): Promise<LogChunk | null> {
    const { s, c } = await this.sftp();
    return this.onLink(c, new Promise((resolve, reject) => {
      s.open(path, 'r', (err, handle) => {
        if (err) return (err as { code?: number }).code === 2 ? resolve(null) : reject(err);
        s.fstat(handle, (err2, st) => {
          if (err2) return s.close(handle, () => reject(err2));
          const size = st.size;
          const len = Math.max(0, Math.min(max, size - offset));
          if (len === 0) return s.close(handle, () => resolve({ data: Buffer.alloc(0), size }));
          const buf = Buffer.alloc(len);
          let got = 0;
          const more = (): void => {
            s.read(handle, buf, got, len - got, offset + got, (err3, n) => {
              if (err3) return s.close(handle, () => reject(err3));
              got += n;
              if (n > 0 && got < len) return more();
              s.close(handle, () => resolve({ data: buf.subarray(0, got), size }));
            });
          };
          more();
        });
      });
    }));
  }

  async list(dir: string): Promise<FileEntry[] | null> {
    const { s, c } = await this.sftp();
    return this.onLink(c, new Promise((resolve, reject) => {
      s.readdir(dir, (err, items) => {
        if (err) return (err as { code?: number }).code === 2 ? resolve(null) : reject(err);
        resolve(
          items.map((it) => ({
            name: it.filename,
            path: posix.join(dir, it.filename),
            isDir: (it.attrs.mode & 0o170000) === 0o040000,
            size: it.attrs.size,
            mtime: it.attrs.mtime,
          })),
        );
      });
    }));
  }

  async readFile(path: string): Promise<Buffer> {
    const { s, c } = await this.sftp();
    return this.onLink(c, new Promise((resolve, reject) => s.readFile(path, (err, data) => (err ? reject(err) : resolve(data)))));
  }

  async writeFile(path: string, data: Buffer | string, mode = 0o644): Promise<void> {
    const { s, c } = await this.sftp();
    await this.onLink(c, new Promise<void>((resolve, reject) => s.writeFile(path, data, { mode }, (err) => (err ? reject(err) : resolve()))));
  }

  async mkdirp(dir: string): Promise<void> {
    const { code, stderr } = await this.exec(`mkdir -p -- ${quoteForMkdir(dir)}`);
    if (code !== 0) throw new DomainError('unavailable', `Could not create ${dir} on ${this.label}: ${stderr.trim()}`);
  }

  /** A TCP stream to host:port as seen from the remote machine (the Ray tunnel, a model endpoint's requests). */
  async forward(host: string, port: number): Promise<ClientChannel> {
    const c = await this.connect();
    return this.onLink(c, new Promise((resolve, reject) =>
      c.forwardOut('127.0.0.1', 0, host, port, (err, ch) => {
        if (err) reject(new DomainError('unavailable', `SSH tunnel to ${host}:${port} on ${this.label} refused: ${err.message}`));
        else {
          this.forwards++;
          resolve(ch);
        }
      }),
    ));
  }

  /**
   * This connection as a carrier for a model endpoint's requests (core/models/tunnel.ts), labelled
   * with what it serves (a job) and its login for messages; never a key or passphrase.
   */
  forwarder(what: string): { label: string; forward(host: string, port: number): Promise<ClientChannel>; connected(): boolean } {
    return { label: `${what} (SSH ${this.label})`, forward: (host, port) => this.forward(host, port), connected: () => this.connected };
  }

  close(): void {
    this.closed = true;
    this.client?.end();
    this.client = null;
  }
}

function quoteForMkdir(p: string): string {
  return `'${p.replace(/'/g, `'\\''`)}'`;
}
