import { createHash, randomUUID } from 'node:crypto';
import type { AuditOptions, EnvAudit } from './types';
import type { SweepExecutor } from '../sweeps/executor';
import { auditWork, checkSetKey, itemKey } from './sweepKind';

/**
 * One program audited on a sweep target, now: what a design round does with each attempt when it
 * runs on a cluster. Unlike a pool sweep nothing is kept between runs (the round already stores every
 * attempt with its verdicts), so a lost result is simply an error the round reports for that attempt.
 * The verdict is made here from the raw reply by the same function as a pool sweep's and the local
 * pool's (remote.ts), so a game gets the same answer wherever its check ran.
 */
export async function auditOn(
  executor: SweepExecutor<EnvAudit>,
  code: string,
  options: AuditOptions & { hint?: string | null },
  o: { name: string; signal?: AbortSignal | undefined },
): Promise<EnvAudit> {
  const sha = createHash('sha256').update(code).digest('hex');
  const key = itemKey(sha, checkSetKey(options));
  // A submission id the engine has never seen: a design round checks the same program more than once.
  const id = `check-${randomUUID().slice(0, 8)}`;
  const work = auditWork(options);
  const handle = await executor.submit(id, 0, [{ key, file: o.name, sha256: sha, name: o.name, hint: options.hint ?? null }], new Map([[sha, code]]), work);
  let audit: EnvAudit | null = null;
  const ac = new AbortController();
  const stopFollowing = () => ac.abort();
  o.signal?.addEventListener('abort', stopFollowing, { once: true });
  try {
    await executor.follow(
      handle,
      work,
      (k, a) => {
        if (k === key && a) audit = a;
      },
      ac.signal,
    );
  } finally {
    o.signal?.removeEventListener('abort', stopFollowing);
    // A cancelled round leaves nothing running on the cluster.
    if (!audit) await executor.stop(handle).catch(() => undefined);
  }
  if (audit) return audit;
  if (o.signal?.aborted) throw new Error(`The check of ${o.name} on ${executor.label} was cancelled`);
  throw new Error(`The check of ${o.name} on ${executor.label} returned no result${executor.lastError ? ` (${executor.lastError})` : ''}`);
}
