import { AuditPool } from './pool';
import type { AuditOptions, EnvAudit } from './types';
import type { OnResult, SweepExecutor, SweepWork } from '../sweeps/executor';
import type { SweepItem } from '../sweeps/sweepStore';

/**
 * This machine's native audit pool, as a sweep target: its work lives only in this process, so a
 * submission is followed where it runs and a killed workbench leaves nothing behind to find.
 */
export class LocalExecutor implements SweepExecutor<EnvAudit> {
  readonly label = 'local';
  private readonly pool: AuditPool;
  private readonly runs = new Map<string, { items: readonly SweepItem[]; sources: ReadonlyMap<string, string> }>();

  constructor(workers: number) {
    this.pool = new AuditPool({ workers });
  }

  async submit(sweepId: string, attempt: number, items: readonly SweepItem[], sources: ReadonlyMap<string, string>): Promise<Record<string, unknown>> {
    const id = `${sweepId}-${attempt}`;
    this.runs.set(id, { items, sources });
    return { kind: 'local', id };
  }

  async follow(handle: Record<string, unknown>, work: SweepWork<EnvAudit>, onResult: OnResult<EnvAudit>, signal: AbortSignal): Promise<void> {
    const run = this.runs.get(String(handle.id));
    if (!run) return; // a local submission of an earlier process: gone with it
    this.runs.delete(String(handle.id));
    const options = work.options as AuditOptions;
    await Promise.all(
      run.items.map(async (it) => {
        if (signal.aborted) return;
        const a = await this.pool.audit(run.sources.get(it.sha256)!, { ...options, hint: it.hint }, { signal }).catch(() => null);
        if (!signal.aborted) await onResult(it.key, a, null);
      }),
    );
  }

  async stop(): Promise<string> {
    return 'local audits stop with the command';
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}
