import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../../core/memory/db';
import { importPaths } from '../../../core/memory/importer';
import { JobManager, type JobManagerOptions } from '../../../core/jobs/manager';
import { MemorySecretStore, type SecretStore } from '../../../core/jobs/secrets';
import type { JobRecord } from '../../../core/jobs/types';

export interface CiServices {
  host: string;
  port: number;
  user: string;
  key: string;
  knownHosts: string;
  slurm: boolean;
  /** A passphrase-protected key authorized on the sshd, for the ssh-agent login test. */
  agentKey: string;
  agentPassphrase: string;
}

/** What .ci/services.sh started (sshd, Slurm); null when it has not run on this machine. */
export function ciServices(): CiServices | null {
  const file = join(process.env.SPADE_CI_DIR ?? '/tmp/spade-ci', 'env');
  if (!existsSync(file)) return null;
  const env: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) env[line.slice(0, i)] = line.slice(i + 1);
  }
  return {
    host: env.SPADE_CI_SSH_HOST ?? '127.0.0.1',
    port: Number(env.SPADE_CI_SSH_PORT ?? 2222),
    user: env.SPADE_CI_SSH_USER ?? 'root',
    key: env.SPADE_CI_SSH_KEY ?? '',
    knownHosts: env.SPADE_CI_KNOWN_HOSTS ?? '',
    slurm: env.SPADE_CI_SLURM === '1',
    agentKey: env.SPADE_CI_AGENT_KEY ?? '',
    agentPassphrase: env.SPADE_CI_AGENT_PASSPHRASE ?? '',
  };
}

export interface CiRay {
  /** The real Ray head's dashboard (Jobs REST API), on 127.0.0.1. */
  address: string;
  /** The venv's bin folder, with the `ray` command. */
  bin: string;
  tmp: string;
}

/** The Ray head .ci/services.sh started ($SPADE_CI_RAY_ENV, else $SPADE_CI_DIR/ray.env); null when none. */
export function ciRay(): CiRay | null {
  const file = process.env.SPADE_CI_RAY_ENV ?? join(process.env.SPADE_CI_DIR ?? '/tmp/spade-ci', 'ray.env');
  if (!existsSync(file)) return null;
  const env: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) env[line.slice(0, i)] = line.slice(i + 1);
  }
  if (!env.SPADE_CI_RAY_ADDRESS) return null;
  return { address: env.SPADE_CI_RAY_ADDRESS, bin: env.SPADE_CI_RAY_BIN ?? '', tmp: env.SPADE_CI_RAY_TMP ?? '' };
}

/** A plain HTTP request to the Ray head, as `ray job` and curl make them (Ray refuses fetch()'s browser headers). */
export function rayRest(address: string, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, address), { method, headers: payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {} }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

export const SERVICES_MISSING = 'sshd/Slurm are not running here: start them with `.ci/services.sh start` (CI does)';

export function makeManager(dataDir: string, extra: Partial<JobManagerOptions> & { secrets?: SecretStore } = {}): { db: Db; manager: JobManager; errors: string[] } {
  const db = openDatabase(join(dataDir, 'workbench.sqlite'));
  const errors: string[] = [];
  const manager = new JobManager({
    db,
    dataDir,
    secrets: extra.secrets ?? new MemorySecretStore(),
    importer: (paths, o) => importPaths(db, paths, o),
    pollMs: 300,
    slurmPollMs: { min: 300, max: 1200 },
    onError: (m) => errors.push(m),
    sshConfigText: '',
    ...extra,
  });
  return { db, manager, errors };
}

export async function waitFor<T>(what: string, fn: () => T | Promise<T>, timeoutMs = 90_000): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < end) {
    last = await fn();
    if (last) return last as NonNullable<T>;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`Timed out waiting for ${what} (last: ${JSON.stringify(last)?.slice(0, 300)})`);
}

export function waitState(manager: JobManager, id: string, states: JobRecord['state'][], timeoutMs = 90_000): Promise<JobRecord> {
  return waitFor(`job ${id} to reach ${states.join('/')}`, () => {
    const j = manager.get(id);
    return states.includes(j.state) ? j : null;
  }, timeoutMs);
}

/** The example run is numbered 1..N: every line once, in order, is what the tail must deliver. */
export function rolloutLines(log: string): string[] {
  return log.split('\n').filter((l) => /^rollout \d+: /.test(l));
}

/** Every file under a folder whose bytes contain `needle` (the secret scans). */
export function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  const walk = (p: string): void => {
    if (!existsSync(p)) return;
    const st = statSync(p);
    if (st.isDirectory()) for (const n of readdirSync(p)) walk(join(p, n));
    else if (readFileSync(p).includes(needle)) hits.push(p);
  };
  walk(dir);
  return hits;
}
