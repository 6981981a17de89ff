import { DomainError } from '../errors';

/**
 * The only way job input reaches a shell. Every value a user typed (names, paths, variables,
 * arguments) is single-quoted here; names that must stay bare (variable names) are validated
 * instead. Nothing else in core/jobs may build a shell line by concatenating user input.
 */
export function shQuote(value: string): string {
  if (value.includes('\0')) throw new DomainError('invalid_input', 'A value with a NUL byte cannot be passed to a shell');
  if (value !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export function shJoin(argv: string[]): string {
  return argv.map(shQuote).join(' ');
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
export function assertEnvName(name: string): void {
  if (!ENV_NAME.test(name)) throw new DomainError('invalid_input', `Not a valid environment variable name: ${JSON.stringify(name.slice(0, 80))}`);
}

/** `export NAME='value'` lines, for scripts written to the job's machine (never secrets). */
export function exportLines(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([k, v]) => {
      assertEnvName(k);
      return `export ${k}=${shQuote(v)}`;
    })
    .join('\n');
}

/**
 * A shell prologue that reads secret values from stdin into the environment, so they travel over
 * the SSH channel and never touch a file or a command line. Values must be single lines.
 */
export function secretPrologue(names: string[]): string {
  return names
    .map((n) => {
      assertEnvName(n);
      return `IFS= read -r ${n} && export ${n}`;
    })
    .join(' && ');
}

export function secretStdin(names: string[], values: Record<string, string>): string {
  return names
    .map((n) => {
      const v = values[n];
      if (v === undefined) throw new DomainError('invalid_input', `Secret ${n} is not set; add it in the launch dialog first`);
      if (/[\r\n\0]/.test(v)) throw new DomainError('invalid_input', `Secret ${n} contains a line break, which is not supported`);
      return `${v}\n`;
    })
    .join('');
}

/** Job names become file and Slurm names: keep a safe slug, the full name stays in the database. */
export function safeSlug(name: string, max = 40): string {
  const s = name.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._-]+/, '').slice(0, max);
  return s || 'job';
}
