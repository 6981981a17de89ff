import type { RuntimeChoice, RuntimeKind } from '../api/schemas';
// The spellings without zod: --help and usage errors load nothing heavy (tests/integration/cli.test.ts).
import { RUNTIME_CHOICES, RUNTIME_KINDS } from '../api/runtimeKinds';
import { DomainError } from '../errors';

/** A CLI subcommand. Output goes through `io` so tests can capture it without a subprocess. */
export interface CliIO {
  out(text: string): void;
  err(text: string): void;
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  /** Returns the exit status. */
  run(argv: string[], io: CliIO): Promise<number>;
}

/** A command line that does not say what it means: the CLI prints it with the usage, exit status 2. */
export class UsageError extends DomainError {
  constructor(message: string) {
    super('invalid_input', message);
    this.name = 'UsageError';
  }
}

/** `--runtime`: a runtime the command accepts, in the contract's spellings, else a UsageError naming them. */
export function runtimeArg(value: string | undefined, fallback: RuntimeChoice): RuntimeChoice;
export function runtimeArg(value: string | undefined, fallback: RuntimeKind, onlyKinds: true): RuntimeKind;
export function runtimeArg(value: string | undefined, fallback: RuntimeChoice, onlyKinds = false): RuntimeChoice {
  const allowed: readonly string[] = onlyKinds ? RUNTIME_KINDS : RUNTIME_CHOICES;
  const v = value ?? fallback;
  if (!allowed.includes(v)) throw new UsageError(`--runtime must be ${allowed.slice(0, -1).join(', ')} or ${allowed[allowed.length - 1]}, got ${v}`);
  return v as RuntimeChoice;
}
