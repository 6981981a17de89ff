import type { RemoteResult } from './remote';
import type { SweepItem } from './sweepStore';

/**
 * What a sweep does to each item (an audit of an environment version, one regret episode): a kind
 * registered by the folder that owns it (kinds.ts), by name.
 */
export type SweepKind = string;

/** A result as it arrives from wherever it ran (null: it has to run again). */
export type OnResult<R> = (key: string, result: R | null, node: string | null) => void | Promise<void>;

/**
 * What the remote executors need to know of a sweep's kind: the shard runner the nodes run, what
 * an item and the options look like to it, and what a raw result line becomes here. The executors
 * carry items and results; they never look inside either.
 */
export interface SweepWork<R> {
  kind: SweepKind;
  /** The shard runner in native/dispatch (without `.py`): shard_audit, shard_regret. */
  runner: string;
  /** What the runner is told beside its limits (config.options). */
  options: unknown;
  /** An item as the shard runner reads it (one JSONL line). */
  remoteItem(it: SweepItem, source: string): Record<string, unknown>;
  /** A raw result line as this workbench keeps it; null when the item must run again. */
  fromRemote(r: RemoteResult): R | null;
}

/** Where a sweep's work runs: this machine, a Ray cluster, a Slurm cluster. */
export interface SweepExecutor<R> {
  /** How the target is written on the command line, for progress lines and the sweep record. */
  readonly label: string;
  /** What the engine last said went wrong (a shard's task failed), for the sweep's error. */
  lastError?: string | null;
  /** Starts the items' work (their sources by version hash) and returns the engine's handle on it. */
  submit(sweepId: string, attempt: number, items: readonly SweepItem[], sources: ReadonlyMap<string, string>, work: SweepWork<R>): Promise<Record<string, unknown>>;
  /**
   * Follows a submission until it ends, handing each result over as it arrives (and waiting for it
   * to be taken); results already seen may come again (after a resume, a reconnect): the sweep
   * counts each once.
   */
  follow(handle: Record<string, unknown>, work: SweepWork<R>, onResult: OnResult<R>, signal: AbortSignal): Promise<void>;
  /** Stops a submission's work on the engine; says what the engine answered. */
  stop(handle: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}
