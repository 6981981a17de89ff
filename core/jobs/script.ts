import { readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, posix } from 'node:path';
import { exportLines, safeSlug, shJoin, shQuote } from './shell';
import type { JobRecord, SlurmOptions, Transport } from './types';
import { DomainError } from '../errors';

export interface JobPaths {
  workdir: string;
  jobDir: string;
  script: string;
  log: string;
  exitFile: string;
}

const homes = new WeakMap<Transport, string>();

/** `~` and relative workdirs are resolved against the job machine's home, once per transport. */
export async function machineHome(t: Transport): Promise<string> {
  const known = homes.get(t);
  if (known) return known;
  let home: string;
  if (t.label === 'local') home = homedir();
  else {
    const r = await t.exec('printf %s "$HOME"');
    home = r.stdout.trim() || '/tmp';
  }
  homes.set(t, home);
  return home;
}

export function absolute(p: string, home: string): string {
  if (p === '~') return home;
  if (p.startsWith('~/')) return posix.join(home, p.slice(2));
  if (!p.startsWith('/')) return posix.join(home, p);
  return p;
}

export function jobPaths(job: JobRecord, home: string): JobPaths {
  const workdir = absolute(job.spec.workdir || '~', home);
  const jobDir = posix.join(workdir, '.spade_workbench', job.id);
  return { workdir, jobDir, script: posix.join(jobDir, 'job.sh'), log: posix.join(jobDir, 'job.log'), exitFile: posix.join(jobDir, 'exit_code') };
}

/** Recipe placeholders a value may use; expanded before quoting, so they never open a shell. */
export function expand(value: string, paths: JobPaths): string {
  return value.replace(/\{\{(JOB_DIR|WORKDIR)\}\}/g, (_m, k: string) => (k === 'JOB_DIR' ? paths.jobDir : paths.workdir));
}

export function outputPath(p: string | undefined, paths: JobPaths): string | null {
  if (!p) return null;
  const e = expand(p, paths);
  return e.startsWith('/') ? e : posix.join(paths.workdir, e);
}

/**
 * The command, with a recipe's answer lines on its standard input when it has them (a pipe: the exit
 * status is still the command's); otherwise its input is whatever the backend gave the script.
 */
export function commandLine(argv: string[], stdin: string[] | undefined): string {
  if (!stdin?.length) return shJoin(argv);
  for (const l of stdin) if (/[\r\n\0]/.test(l)) throw new DomainError('invalid_input', 'An answer line for a job\'s input cannot hold a line break');
  return `printf '%s\\n' ${stdin.map(shQuote).join(' ')} | ${shJoin(argv)}`;
}

/** The script every shell backend runs: variables, working directory, the argv, the exit code. */
export function renderJobScript(job: JobRecord, paths: JobPaths): string {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(job.spec.env)) env[k] = expand(v, paths);
  const argv = job.spec.command.map((a) => expand(a, paths));
  return [
    '#!/bin/sh',
    `# SPADE Workbench job ${job.id} (${safeSlug(job.name)})`,
    exportLines(env),
    `cd ${shQuote(paths.workdir)} || exit 97`,
    commandLine(argv, job.spec.stdin),
    'code=$?',
    `printf '%s\\n' "$code" > ${shQuote(paths.exitFile)}`,
    'exit "$code"',
    '',
  ].join('\n');
}

function directive(flag: string, value: string | number | undefined, valid: RegExp): string | null {
  if (value === undefined || value === '') return null;
  const s = String(value);
  if (!valid.test(s)) throw new DomainError('invalid_input', `Invalid Slurm ${flag}: ${JSON.stringify(s.slice(0, 60))}`);
  return `#SBATCH --${flag}=${s}`;
}

export function slurmDirectives(job: JobRecord, o: SlurmOptions = {}): string {
  return [
    `#SBATCH --job-name=${safeSlug(job.name)}`,
    directive('partition', o.partition, /^[A-Za-z0-9_.,-]{1,64}$/),
    directive('gpus', o.gpus, /^[0-9]{1,3}$/),
    directive('gres', o.gres, /^[A-Za-z0-9_:.,-]{1,100}$/),
    directive('time', o.time, /^[0-9]{1,5}([:-][0-9]{1,2}){0,3}$/),
    directive('cpus-per-task', o.cpusPerTask, /^[0-9]{1,4}$/),
    directive('mem', o.mem, /^[0-9]{1,7}[KMGT]?$/),
  ]
    .filter((l): l is string => l !== null)
    .join('\n');
}

/** The sbatch template runs its command inside a container wrapper that takes no piped input: a job needing answers is refused. */
function stdinRefused(job: JobRecord): null {
  if (job.spec.stdin?.length) throw new DomainError('invalid_input', `Job ${job.id} answers its command on standard input, which the Slurm backend does not give it; run it as a local or SSH job`);
  return null;
}

/** The sbatch script: resources/jobs/sbatch.template with every slot filled by a quoted value. */
export function renderSbatch(template: string, job: JobRecord, paths: JobPaths): string {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(job.spec.env)) env[k] = expand(v, paths);
  const slots: Record<string, string> = {
    SBATCH_DIRECTIVES: slurmDirectives(job, job.spec.slurm),
    JOB_ID: job.id,
    JOB_SLUG: safeSlug(job.name),
    EXPORTS: exportLines(env),
    CONTAINER: shQuote(job.spec.slurm?.container ?? ''),
    WORKDIR: shQuote(paths.workdir),
    JOB_DIR: shQuote(paths.jobDir),
    COMMAND: stdinRefused(job) ?? shJoin(job.spec.command.map((a) => expand(a, paths))),
    EXIT_FILE: shQuote(paths.exitFile),
  };
  return template.replace(/\{\{([A-Z_]+)\}\}/g, (m, k: string) => {
    const v = slots[k];
    if (v === undefined) throw new DomainError('invalid_input', `The sbatch template uses an unknown slot ${m}`);
    return v;
  });
}

/**
 * What every backend does before it launches: the job folder on the job's machine, the shipped
 * files in it, and the script (rendered by the backend: plain shell or an sbatch file).
 */
export async function stageJob(t: Transport, job: JobRecord, render: (paths: JobPaths) => string): Promise<JobPaths> {
  const paths = jobPaths(job, await machineHome(t));
  await t.mkdirp(paths.jobDir);
  await ship(t, job.spec.ship, paths);
  await t.writeFile(paths.script, render(paths), 0o700);
  return paths;
}

/** Uploads local files or folders (recipe scripts, a seed pool) into the job directory. */
export async function ship(t: Transport, items: { from: string; to: string }[], paths: JobPaths): Promise<number> {
  let n = 0;
  const put = async (from: string, to: string): Promise<void> => {
    const st = statSync(from);
    if (st.isDirectory()) {
      await t.mkdirp(to);
      for (const name of readdirSync(from)) {
        if (name === '__pycache__' || name.startsWith('.')) continue;
        await put(join(from, name), posix.join(to, name));
      }
      return;
    }
    await t.writeFile(to, readFileSync(from), st.mode & 0o777);
    n++;
  };
  for (const it of items) {
    const rel = expand(it.to, paths);
    const dest = rel.startsWith('/') ? rel : posix.join(paths.jobDir, rel);
    if (rel.includes('..')) throw new DomainError('invalid_input', `Refusing to ship outside the job directory: ${it.to}`);
    await t.mkdirp(posix.dirname(dest));
    await put(it.from, dest);
  }
  return n;
}
