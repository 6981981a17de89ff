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

export class UsageError extends Error {
  override name = 'UsageError';
}
