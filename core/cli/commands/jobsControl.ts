import type { AttachInput, JobArtefacts, JobSummary, LaunchInput } from '../../api/calls/jobs';
import { spadeRunOutputs } from '../../api/spadeRun';
import { sshTargetFor } from '../../sweeps/targets';
import { DomainError } from '../../errors';
import { JobService } from '../../jobs/service';
import { loadRecipes, type Recipe } from '../../jobs/recipes';
import { isTerminal, type SshTarget } from '../../jobs/types';
import type { Db } from '../../memory/db';
import { importPaths } from '../../memory/importer';
import { RunStore } from '../../runs/runStore';
import { EventBus } from '../../server/events';
import { UsageError, type CliIO } from '../command';

/**
 * `jobs launch | attach | stop | artefacts | continue`: the app's jobs service (core/jobs/service.ts),
 * built for this process on the same database, so a job launched here is the app's job too (the app
 * follows it once it is opened there, or at its next start).
 */

export interface ControlValues {
  on?: string | undefined;
  env?: string[] | undefined;
  name?: string | undefined;
  workdir?: string | undefined;
  'ssh-key'?: string | undefined;
  'known-hosts'?: string | undefined;
  ssh?: string | undefined;
  container?: string | undefined;
  partition?: string | undefined;
  gpus?: string | undefined;
  time?: string | undefined;
  'output-dir'?: string | undefined;
  load?: string | undefined;
  yes?: boolean | undefined;
  follow?: boolean | undefined;
  json?: boolean | undefined;
}

export function jobService(db: Db, dataDir: string, io: CliIO): JobService {
  return new JobService({
    db,
    dataDir,
    events: new EventBus((p) => io.err(`event not sent: ${p}`)),
    importer: (paths, o) => importPaths(db, paths, o),
    runs: new RunStore(db),
    log: (level, message) => level !== 'info' && io.err(`${level}: ${message}`),
  });
}

type Where = { backend: 'local' } | { backend: 'ssh' | 'slurm'; ssh: SshTarget; label: string } | { backend: 'ray'; address: string };

/** `--on local | ssh:HOST | slurm:HOST | ray://HOST:PORT`; HOST is [user@]host[:port], an ~/.ssh/config alias, or a host a job used before. */
export function parseOn(db: Db, v: ControlValues): Where {
  const on = v.on ?? 'local';
  if (on === 'local') return { backend: 'local' };
  const reach = { workers: 1, shardSize: 1, envTimeoutSec: 1, python: '', sshKey: v['ssh-key'], knownHosts: v['known-hosts'] };
  const m = /^(ssh|slurm):(\S+)$/.exec(on);
  if (m) {
    try {
      return { backend: m[1] as 'ssh' | 'slurm', ssh: sshTargetFor(db, m[2]!, reach), label: on };
    } catch (e) {
      throw new UsageError(`--on ${on}: ${(e as Error).message.replace(/^slurm:\S+: /, '')}`);
    }
  }
  const ray = /^ray:\/\/([^/\s]+)\/?$/.exec(on);
  if (ray) {
    const url = new URL(`http://${ray[1]}`);
    if (!url.port) url.port = '8265';
    return { backend: 'ray', address: url.origin };
  }
  throw new UsageError(`--on must be local, ssh:HOST, slurm:HOST or ray://HOST:PORT (a Ray head's dashboard), got ${on}`);
}

/** `--env K=V` pairs, each a variable the recipe's script reads; secrets never come this way. */
export function recipeEnv(recipe: Recipe, pairs: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  const known = new Set([...Object.keys(recipe.env), ...recipe.requiredEnv, ...recipe.optionalEnv]);
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i <= 0) throw new UsageError(`--env takes NAME=VALUE, got ${JSON.stringify(p)}`);
    const k = p.slice(0, i);
    if (recipe.secretEnv.includes(k)) throw new UsageError(`${k} is a secret: set it in this command's environment (export ${k}=...), never on its command line`);
    if (!known.has(k)) {
      const names = [...known].filter((n) => !recipe.secretEnv.includes(n)).sort();
      throw new UsageError(`Recipe ${recipe.id} does not read ${k}${recipe.spadeScript ? ` (${recipe.spadeScript} never does)` : ''}; it reads: ${names.join(', ') || 'no variables'}`);
    }
    env[k] = p.slice(i + 1);
  }
  return env;
}

/** The recipe's secrets found in this command's environment go to the session's store, by name. */
function takeSecrets(svc: JobService, names: string[]): string[] {
  const taken: string[] = [];
  for (const n of names) {
    const v = process.env[n];
    if (v) {
      svc.secrets.set(n, v);
      taken.push(n);
    }
  }
  return taken;
}

function requireRecipe(id: string | undefined): Recipe {
  const recipes = loadRecipes();
  if (!id) throw new UsageError(`jobs launch takes a recipe: ${recipes.map((r) => r.id).join(', ')}`);
  const r = recipes.find((x) => x.id === id);
  if (!r) throw new UsageError(`Unknown recipe ${id}; the recipes are: ${recipes.map((x) => x.id).join(', ')}`);
  return r;
}

function intOption(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d{1,4}$/.test(v)) throw new UsageError(`--${name} takes a whole number, got ${v}`);
  return Number(v);
}

export function launchInput(db: Db, svc: JobService, recipeId: string | undefined, v: ControlValues): LaunchInput {
  const recipe = requireRecipe(recipeId);
  const where = parseOn(db, v);
  if (!recipe.backends.includes(where.backend)) throw new UsageError(`Recipe ${recipe.id} runs on ${recipe.backends.join(', ')}, not ${where.backend}`);
  const env = recipeEnv(recipe, v.env ?? []);
  const missingSecrets = recipe.requiredEnv.filter((k) => recipe.secretEnv.includes(k) && !process.env[k]);
  if (missingSecrets.length) throw new UsageError(`Recipe ${recipe.id} needs the secret${missingSecrets.length > 1 ? 's' : ''} ${missingSecrets.join(', ')}: set ${missingSecrets.length > 1 ? 'them' : 'it'} in this command's environment`);
  const input: LaunchInput = { name: v.name ?? recipe.id, backend: where.backend, recipe: recipe.id, env, secretEnv: takeSecrets(svc, recipe.secretEnv) };
  if (v.workdir) input.workdir = v.workdir;
  if (where.backend === 'ssh' || where.backend === 'slurm') input.ssh = where.ssh;
  if (where.backend === 'ray') input.ray = { address: where.address };
  if (where.backend === 'slurm') {
    const gpus = intOption('gpus', v.gpus);
    input.slurm = { ...(v.container ? { container: v.container } : {}), ...(v.partition ? { partition: v.partition } : {}), ...(gpus !== undefined ? { gpus } : {}), ...(v.time ? { time: v.time } : {}) };
  } else if (v.container || v.partition || v.gpus || v.time) throw new UsageError('--container, --partition, --gpus and --time are for --on slurm:HOST');
  return input;
}

/** `jobs attach --on slurm:HOST|ray://HOST:PORT ID`: what the app's Attach dialog asks for. */
export function attachInput(db: Db, externalId: string | undefined, v: ControlValues): AttachInput {
  if (!externalId) throw new UsageError('jobs attach takes the Slurm job id or the Ray submission id');
  if (!/^[A-Za-z0-9_.-]{1,200}$/.test(externalId)) throw new UsageError(`Not a Slurm job id or Ray submission id: ${JSON.stringify(externalId)}`);
  const where = parseOn(db, v);
  const input: AttachInput = { name: v.name ?? externalId, backend: 'slurm', externalId };
  if (where.backend === 'slurm') input.ssh = where.ssh;
  else if (where.backend === 'ray') {
    input.backend = 'ray';
    input.ray = { address: where.address };
    if (v.ssh) {
      // The dashboard as the SSH host reaches it, through a tunnel (a head that listens only on its node).
      const via = parseOn(db, { ...v, on: `ssh:${v.ssh}` });
      if (via.backend === 'ssh') input.ssh = via.ssh;
      input.ray.tunnel = true;
    }
  } else throw new UsageError('jobs attach follows a Slurm job (--on slurm:HOST) or a Ray job (--on ray://HOST:PORT)');
  if (v['output-dir']) input.outputs = spadeRunOutputs(v['output-dir']);
  return input;
}

/** Prints the job's log as it grows while this process follows it; the exit status is its outcome. */
export async function followToEnd(svc: JobService, id: string, io: CliIO): Promise<number> {
  let offset = 0;
  for (;;) {
    const job = svc.manager.get(id);
    const chunk = svc.manager.readLog(id, offset, 1 << 20);
    if (chunk.text) io.out(chunk.text.replace(/\n$/, ''));
    offset = chunk.nextOffset;
    if (chunk.nextOffset < chunk.size) continue;
    if (isTerminal(job.state)) {
      const tail = svc.manager.readLog(id, offset, 1 << 20);
      if (tail.text) io.out(tail.text.replace(/\n$/, ''));
      io.err(`job ${id}: ${job.state}${job.detail ? ` (${job.detail})` : ''}`);
      return job.state === 'succeeded' ? 0 : 1;
    }
    await new Promise((r) => setTimeout(r, 300));
  }
}

export function printStarted(io: CliIO, j: JobSummary, json: boolean, verb: string): void {
  if (json) io.out(JSON.stringify(j));
  else {
    io.out(j.id);
    io.err(`${verb} ${j.name}: ${j.state}${j.detail ? ` (${j.detail})` : ''}. Follow it with \`jobs logs ${j.id} --follow\`; stop it with \`jobs stop ${j.id}\`.`);
  }
}

/** A stop of someone else's job (attached) needs --yes, as the app asks first. */
export async function stopJob(svc: JobService, id: string, v: ControlValues, io: CliIO): Promise<number> {
  try {
    const r = await svc.manager.stop(id, { confirmAttached: v.yes === true });
    if (v.json) io.out(JSON.stringify({ ...svc.summary(r), stopAnswer: r.stopAnswer }));
    else io.out(`${r.id} ${r.state}: ${r.stopAnswer}`);
    return 0;
  } catch (e) {
    if (e instanceof DomainError && e.code === 'conflict' && (e.details as { attached?: boolean } | undefined)?.attached) {
      io.err(`Not stopped: ${e.message.replace(/: confirm to stop it\.$/, '.')} Pass --yes to stop it.`);
      return 1;
    }
    throw e;
  }
}

const fmt = (v: number | string | boolean | null): string => (v === null ? '-' : typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(4)) : String(v));

/** The artefacts as text: checkpoints, then one column per evaluated checkpoint, one row per metric. */
export function printArtefacts(io: CliIO, a: JobArtefacts): void {
  io.out(`Run folder: ${a.runDir ?? '(none)'}`);
  if (a.note) io.out(a.note);
  for (const s of a.saveDirs) io.out(`${s.kind === 'megatron' ? 'Save folder' : 'Tinker log'} ${s.path}: ${s.checkpoints} checkpoint(s)${s.latest !== null ? `, latest step ${s.latest}` : s.kind === 'megatron' ? `, no ${'latest_checkpointed_iteration.txt'}` : ''}`);
  for (const c of a.checkpoints) io.out(`  ${c.step === null ? 'release'.padStart(8) : `step ${String(c.step).padStart(3)}`.padStart(8)}  ${c.latest ? 'latest' : '      '}  ${c.path}`);
  if (!a.checkpoints.length && !a.note) io.out('No checkpoints yet.');
  if (a.evals.length) {
    io.out('');
    io.out(`Offline evaluation (eval_offline results.json), ${a.evals.length} checkpoint(s):`);
    const cols = a.evals.map((e) => (e.step === null ? e.ckpt.split('/').pop() ?? e.path : `step ${e.step}`));
    const rows = new Map<string, (number | string | boolean | null | undefined)[]>();
    a.evals.forEach((e, i) => {
      for (const s of e.suites) {
        const key = (k: string) => `${s.name}  ${k}`;
        if (s.skipped || s.error) {
          if (!rows.has(key('(status)'))) rows.set(key('(status)'), []);
          rows.get(key('(status)'))![i] = s.skipped ? 'skipped' : `error: ${s.error}`;
        }
        for (const [k, v] of Object.entries(s.metrics)) {
          if (!rows.has(key(k))) rows.set(key(k), []);
          rows.get(key(k))![i] = v;
        }
      }
    });
    const w = Math.min(60, Math.max(...[...rows.keys()].map((k) => k.length), 6));
    io.out(`${''.padEnd(w)}  ${cols.map((c) => c.padStart(12)).join(' ')}`);
    for (const [k, vals] of rows) io.out(`${k.slice(0, w).padEnd(w)}  ${cols.map((_c, i) => fmt(vals[i] ?? null).slice(0, 40).padStart(12)).join(' ')}`);
  }
  for (const p of a.problems) io.out(`! ${p.path}: ${p.message}`);
  io.out(a.continuable ? `Continue: \`jobs continue ID\` ${a.continueNote}` : `Continue: not possible: ${a.continueNote}`);
}

export async function continueJob(svc: JobService, id: string, v: ControlValues): Promise<JobSummary> {
  const names = svc.manager.get(id).spec.secretEnv;
  const missing = names.filter((n) => !takeSecrets(svc, [n]).length);
  if (missing.length) throw new UsageError(`The run was launched with the secret${missing.length > 1 ? 's' : ''} ${missing.join(', ')}: set ${missing.length > 1 ? 'them' : 'it'} in this command's environment`);
  return svc.continueRun(id, v.load);
}
