import type { AuditOptions, EnvAudit } from '../types';
import type { SweepItem } from './sweepStore';

/** An environment's audit as it arrives from wherever it ran (null: it has to run again). */
export type OnAudit = (key: string, audit: EnvAudit | null, node: string | null) => void;

/** Where a sweep's audits run: this machine, a Ray cluster, a Slurm cluster. */
export interface SweepExecutor {
  /** How the target is written on the command line, for progress lines and the sweep record. */
  readonly label: string;
  /** What the engine last said went wrong (a shard's task failed), for the sweep's error. */
  lastError?: string | null;
  /** Starts audits of the items (their sources by version hash) and returns the engine's handle on them. */
  submit(sweepId: string, attempt: number, items: readonly SweepItem[], sources: ReadonlyMap<string, string>, options: AuditOptions): Promise<Record<string, unknown>>;
  /**
   * Follows a submission until it ends, handing each result over as it arrives; results already
   * seen may come again (after a resume, a reconnect): the store counts each once.
   */
  follow(handle: Record<string, unknown>, options: AuditOptions, onAudit: OnAudit, signal: AbortSignal): Promise<void>;
  /** Stops a submission's work on the engine; says what the engine answered. */
  stop(handle: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}
