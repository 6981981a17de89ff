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
