/**
 * The SSH links jobs share (one per host, user, key and known-hosts file) and the host keys a user
 * has been shown but not yet accepted.
 */
import { appendKnownHost } from './ssh/knownHosts';
import { HostKeyError, SshConnection } from './ssh/connection';
import type { SshTarget } from './types';
import { DomainError } from '../errors';

export type HostProbe = { status: 'trusted' } | { status: 'unknown' | 'changed'; host: string; port: number; keyType: string; fingerprint: string; message: string };

export class SshHosts {
  private readonly links = new Map<string, SshConnection>();
  /** Unknown keys seen on connecting, by host, port and fingerprint: only these can be trusted. */
  private readonly pendingHostKeys = new Map<string, Buffer>();

  constructor(
    readonly appKnownHosts: string,
    private readonly configText: string | undefined,
  ) {}

  connection(t: SshTarget): SshConnection {
    const key = JSON.stringify([t.host, t.port ?? null, t.user ?? null, t.identityFile ?? null, t.knownHostsFile ?? null]);
    let c = this.links.get(key);
    if (!c) {
      c = new SshConnection(t, { appKnownHosts: this.appKnownHosts, ...(this.configText !== undefined ? { configText: this.configText } : {}) });
      this.links.set(key, c);
    }
    return c;
  }

  /** Connects once to learn the host key; an unknown key comes back with its fingerprint. Other errors are thrown as they came. */
  async probe(t: SshTarget): Promise<HostProbe> {
    try {
      await this.connection(t).exec('true');
      return { status: 'trusted' };
    } catch (e) {
      if (e instanceof HostKeyError) {
        this.noteHostKeyError(e);
        return { status: e.kind, host: e.host, port: e.port, keyType: e.keyType, fingerprint: e.fingerprint, message: e.message };
      }
      throw e;
    }
  }

  /** The user accepted an unknown key: only the exact key they saw (by fingerprint) is added. */
  trustHostKey(host: string, port: number, fingerprint: string): void {
    const key = this.pendingHostKeys.get(`${host}:${port}:${fingerprint}`);
    if (!key) throw new DomainError('not_found', `No pending host key ${fingerprint} for ${host}:${port}; connect first to see it`);
    appendKnownHost(this.appKnownHosts, host, port, key);
    this.pendingHostKeys.delete(`${host}:${port}:${fingerprint}`);
  }

  noteHostKeyError(e: HostKeyError): void {
    if (e.kind === 'unknown') this.pendingHostKeys.set(`${e.host}:${e.port}:${e.fingerprint}`, e.key);
  }

  /** Cuts every link as a network drop would (the next use reconnects). */
  drop(): void {
    for (const c of this.links.values()) c.drop();
  }

  close(): void {
    for (const c of this.links.values()) c.close();
    this.links.clear();
  }
}
