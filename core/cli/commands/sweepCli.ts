import type { CliIO } from '../command';
import { SweepCancelled, type SweepProgress } from '../../sweeps/sweep';

/** A submission as the engine names it: what to look for in `ray job list` or `squeue`. */
export function submittedText(h: Record<string, unknown>, unit: 'environments' | 'episodes'): string {
  if (h.kind === 'ray') return `Ray job ${String(h.submissionId)} (${String(h.environments)} ${unit})`;
  if (h.kind === 'slurm') return `Slurm job array ${String(h.jobId)} (${String(h.tasks)} tasks, ${String(h.environments)} ${unit}, in ${String(h.dir)})`;
  return `${String(h.id)} on this machine`;
}

interface SweepHooks {
  signal: AbortSignal;
  onProgress: ((p: SweepProgress) => void) | undefined;
  onSubmitted: (h: Record<string, unknown>) => void;
}

/**
 * Drives a sweep from the command line, as `audit --pool` and `regret` both do: Ctrl-C or a
 * SIGTERM (scancel, a job's stop) cancels it, progress and submissions go to stderr. Answers the
 * sweep's result, or null when it was cancelled (the message is printed; the command exits 130).
 */
export async function followSweep<T>(
  io: CliIO,
  o: { kind: 'audit' | 'regret'; sweepId: string; target: string; unit: 'environments' | 'episodes'; quiet: boolean; progress(p: SweepProgress): string },
  drive: (hooks: SweepHooks) => Promise<T>,
): Promise<T | null> {
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await drive({
      signal: abort.signal,
      onProgress: o.quiet ? undefined : (p) => io.err(o.progress(p)),
      onSubmitted: (h) => io.err(`${o.kind} sweep ${o.sweepId} on ${o.target}: submitted ${submittedText(h, o.unit)}`),
    });
  } catch (e) {
    if (e instanceof SweepCancelled) {
      io.err(`${e.message}\n`);
      return null;
    }
    throw e;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
