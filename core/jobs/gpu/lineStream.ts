import { spawn } from 'node:child_process';
import type { ClientChannel } from 'ssh2';
import { errorMessage } from '../../api';
import { DomainError } from '../../errors';
import { LocalTransport } from '../localTransport';
import { SshConnection } from '../ssh/connection';
import type { Transport } from '../types';

/** A long-running command on the job's machine whose output is read line by line as it comes. */
export interface LineStream {
  stop(): void;
  /** Settles when the command ends or its link drops (never rejects): how it ended. */
  done: Promise<{ code: number | null; error: string | null; stderr: string }>;
}

/** A line longer than this is dropped whole (a node printing without newlines must not fill memory). */
const MAX_LINE = 64 * 1024;
const MAX_STDERR = 4096;

function splitter(onLine: (line: string) => void): (d: Buffer) => void {
  let buf = '';
  let skipping = false;
  return (d) => {
    buf += d.toString('utf8');
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i).replace(/\r$/, '');
      buf = buf.slice(i + 1);
      if (!skipping) onLine(line);
      skipping = false;
    }
    if (buf.length > MAX_LINE) {
      buf = '';
      skipping = true;
    }
  };
}

/**
 * Runs `command` through the job's transport (a local shell in its own process group, or an exec
 * channel on the job's SSH connection) and hands each whole stdout line to `onLine`.
 */
export async function streamLines(t: Transport, command: string, onLine: (line: string) => void): Promise<LineStream> {
  let stderr = '';
  const keepErr = (d: Buffer): void => {
    if (stderr.length < MAX_STDERR) stderr = (stderr + d.toString('utf8')).slice(0, MAX_STDERR);
  };
  if (t instanceof LocalTransport) {
    // Its own process group, so stop() ends the sampler and the nvidia-smi it started together.
    const child = spawn('/bin/sh', ['-c', command], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', splitter(onLine));
    child.stderr.on('data', keepErr);
    const done = new Promise<{ code: number | null; error: string | null; stderr: string }>((resolve) => {
      child.on('error', (e) => resolve({ code: null, error: errorMessage(e), stderr }));
      child.on('close', (code) => resolve({ code, error: null, stderr }));
    });
    return {
      stop: () => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGTERM');
        } catch {
          // Already ended.
        }
      },
      done,
    };
  }
  if (t instanceof SshConnection) {
    const client = await t.connect();
    const channel = await new Promise<ClientChannel>((resolve, reject) => client.exec(command, (err, ch) => (err ? reject(err) : resolve(ch))));
    channel.on('data', splitter(onLine));
    channel.stderr.on('data', keepErr);
    const done = new Promise<{ code: number | null; error: string | null; stderr: string }>((resolve) => {
      let code: number | null = null;
      // A dropped link does not always close its channels: the client's end is the sampler's end.
      const onClose = (): void => finish({ code, error: `the connection to ${t.label} dropped`, stderr });
      const onError = (e: Error): void => finish({ code, error: `the connection to ${t.label} dropped: ${errorMessage(e)}`, stderr });
      const finish = (r: { code: number | null; error: string | null; stderr: string }): void => {
        client.off('close', onClose);
        client.off('error', onError);
        resolve(r);
      };
      client.once('close', onClose);
      client.once('error', onError);
      channel.on('exit', (c: number | null) => (code = c));
      channel.on('close', () => finish({ code, error: code === null ? `the connection to ${t.label} closed before the sampler ended` : null, stderr }));
      channel.on('error', (e: Error) => finish({ code: null, error: errorMessage(e), stderr }));
    });
    return {
      stop: () => {
        try {
          // sshd passes the signal on (OpenSSH 7.9+); closing the channel ends the rest at its next write.
          channel.signal('TERM');
          channel.close();
        } catch {
          // The link is already gone.
        }
      },
      done,
    };
  }
  throw new DomainError('unavailable', `no line stream over ${t.label}`);
}
