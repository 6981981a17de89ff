import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshConnection } from '../../../core/jobs/ssh/connection';
import type { SshTarget } from '../../../core/jobs/types';
import { tempDir } from '../../helpers/tmp';
import { ciServices, makeManager, SERVICES_MISSING } from './helpers';

/**
 * The SSH form's key file, against the real sshd: `~` is this machine's home (where the client
 * runs), and a key file that is missing, a folder or a public key is said as such before connecting.
 */
const ci = ciServices();
if (!ci?.key) console.warn(`[ssh key-file test skipped] ${SERVICES_MISSING}`);
const d = ci?.key ? describe : describe.skip;

d('ssh key file named in the host form', () => {
  const tmp = tempDir('spade-ssh-keyfile-');
  const home = join(tmp.dir, 'home');
  const saved = { home: process.env.HOME, sock: process.env.SSH_AUTH_SOCK };
  const target = (identityFile: string): SshTarget => ({ host: ci!.host, port: ci!.port, user: ci!.user, identityFile, knownHostsFile: ci!.knownHosts });
  const connect = (identityFile: string) => new SshConnection(target(identityFile), { appKnownHosts: join(tmp.dir, 'app_known_hosts'), configText: '', readyTimeoutMs: 10_000 });

  beforeAll(() => {
    mkdirSync(join(home, 'keys'), { recursive: true });
    copyFileSync(ci!.key, join(home, 'keys', 'ci key'));
    copyFileSync(`${ci!.key}.pub`, join(home, 'keys', 'ci key.pub'));
    // Only the named key can log in: no agent, and a home without ~/.ssh defaults.
    process.env.HOME = home;
    delete process.env.SSH_AUTH_SOCK;
  });
  afterAll(() => {
    if (saved.home === undefined) delete process.env.HOME;
    else process.env.HOME = saved.home;
    if (saved.sock !== undefined) process.env.SSH_AUTH_SOCK = saved.sock;
    tmp.cleanup();
  });

  it('logs in with a key file given as ~/…, expanded to this machine\'s home', async () => {
    const c = connect('~/keys/ci key');
    try {
      expect(await c.exec('echo key-file-ok')).toMatchObject({ code: 0, stdout: 'key-file-ok\n' });
    } finally {
      c.close();
    }
  });

  it('says what is wrong with a key file before trying to log in', async () => {
    for (const [file, said] of [
      ['~/keys/nope', `The key file ${join(home, 'keys', 'nope')} does not exist`],
      ['~/keys', `The key file ${join(home, 'keys')} is a folder, not a key`],
      ['~/keys/ci key.pub', `The key file ${join(home, 'keys', 'ci key.pub')} holds a public key`],
    ] as const) {
      const c = connect(file);
      try {
        await expect(c.exec('true')).rejects.toThrow(said);
      } finally {
        c.close();
      }
    }
  });

  it('reaches the manager: a job host probed with the key file is trusted and runs commands', async () => {
    const { db, manager } = makeManager(join(tmp.dir, 'data'));
    try {
      expect(await manager.probeHost(target('~/keys/ci key'))).toEqual({ status: 'trusted' });
      expect((await manager.connection(target('~/keys/ci key')).exec('echo via-manager')).stdout).toBe('via-manager\n');
    } finally {
      await manager.close();
      db.close();
    }
  });
});
