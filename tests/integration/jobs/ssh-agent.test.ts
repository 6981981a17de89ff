import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveTarget, SshConnection } from '../../../core/jobs/ssh/connection';
import type { SshTarget } from '../../../core/jobs/types';
import { tempDir } from '../../helpers/tmp';
import { ciServices, SERVICES_MISSING, waitFor } from './helpers';

/**
 * Login through a real OpenSSH ssh-agent: the key on disk has a passphrase the workbench never
 * sees, so the agent (found through SSH_AUTH_SOCK or IdentityAgent) is the only way in.
 */
const ci = ciServices();
if (!ci?.agentKey) console.warn(`[ssh-agent test skipped] ${SERVICES_MISSING}`);
const d = ci?.agentKey ? describe : describe.skip;

d('ssh login through ssh-agent', () => {
  const tmp = tempDir('spade-ssh-agent-');
  const sock = join(tmp.dir, 'agent.sock');
  const savedSock = process.env.SSH_AUTH_SOCK;
  let agent: ChildProcess;
  const target = (): SshTarget => ({ host: ci!.host, port: ci!.port, user: ci!.user, identityFile: ci!.agentKey, knownHostsFile: ci!.knownHosts });
  const connect = (configText = '') => new SshConnection(target(), { appKnownHosts: join(tmp.dir, 'app_known_hosts'), configText, readyTimeoutMs: 10_000 });

  beforeAll(async () => {
    delete process.env.SSH_AUTH_SOCK;
    agent = spawn('ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' });
    await waitFor('the agent socket', () => existsSync(sock) || null, 10_000);
  });
  afterAll(() => {
    agent?.kill();
    if (savedSock === undefined) delete process.env.SSH_AUTH_SOCK;
    else process.env.SSH_AUTH_SOCK = savedSock;
    tmp.cleanup();
  });

  it('cannot log in with the passphrase-protected key alone', async () => {
    expect(resolveTarget(target(), { appKnownHosts: '', configText: '' }).keys).toEqual([]);
    const c = connect();
    try {
      await expect(c.exec('echo no')).rejects.toThrow(/authentication/i);
    } finally {
      c.close();
    }
  });

  it('logs in once the key is in the agent, found through SSH_AUTH_SOCK or IdentityAgent', async () => {
    const askpass = join(tmp.dir, 'askpass.sh');
    writeFileSync(askpass, '#!/bin/sh\nprintf "%s\\n" "$SPADE_TEST_PASSPHRASE"\n');
    chmodSync(askpass, 0o700);
    execFileSync('ssh-add', [ci!.agentKey], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SSH_AUTH_SOCK: sock, SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: 'force', DISPLAY: ':0', SPADE_TEST_PASSPHRASE: ci!.agentPassphrase },
      stdio: ['ignore', 'pipe', 'pipe'],
    });

    process.env.SSH_AUTH_SOCK = sock;
    const viaEnv = connect();
    try {
      const r = await viaEnv.exec('echo agent-ok');
      expect(r).toMatchObject({ code: 0, stdout: 'agent-ok\n' });
    } finally {
      viaEnv.close();
      delete process.env.SSH_AUTH_SOCK;
    }

    const viaConfig = connect(`Host ${ci!.host}\n  IdentityAgent ${sock}\n`);
    try {
      expect((await viaConfig.exec('echo config-ok')).stdout).toBe('config-ok\n');
    } finally {
      viaConfig.close();
    }
  });
});
