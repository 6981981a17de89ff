import type { CallName } from '../api';
import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';
import { envIdsWith, getAudit, listBatches, poolSummary } from '../audit/store';
import { validateCheckIds } from '../audit/types';
import { DomainError } from '../errors';

function checkIds(ids: string[] | undefined): void {
  const bad = ids ? validateCheckIds(ids) : [];
  if (bad.length) throw new DomainError('invalid_input', `Unknown check id(s): ${bad.join(', ')}`);
}

type AuditCall = Extract<CallName, `audit.${string}`>;

export function auditHandlers(s: Services): Pick<Handlers, AuditCall> {
  return {
    'audit.run': async ({ hash, runId, checks, callTimeoutSec }) => {
      checkIds(checks);
      const r = await s.audit.runOne(hash, { checks, callTimeoutSec }, runId);
      if (!r) throw new DomainError('not_found', `No environment version ${hash.slice(0, 12)}`);
      return r;
    },
    'audit.batch': ({ envIds, all, checks, callTimeoutSec }) => {
      checkIds(checks);
      if (!all && !envIds) throw new DomainError('invalid_input', 'Give envIds or all: true');
      return s.audit.startBatch({ envIds, all }, { checks, callTimeoutSec });
    },
    'audit.cancel': ({ batchId }) => ({ cancelled: s.audit.cancel(batchId) }),
    'audit.runCancel': ({ runId }) => ({ cancelled: s.audit.cancelRun(runId) }),
    'audit.resume': ({ batchId }) => {
      const r = s.audit.resume(batchId);
      if (!r) throw new DomainError('not_found', `No audit batch ${batchId}`);
      return r;
    },
    'audit.batches': ({ limit }) => listBatches(s.db, limit ?? 20),
    'audit.results': ({ hash }) => s.audit.results(hash),
    'audit.summary': () => poolSummary(s.db),
    'audit.environments': ({ checkId, status }) => ({ ids: envIdsWith(s.db, checkId, status) }),
    'audit.verdicts': ({ hashes }) =>
      hashes.map((hash) => {
        const a = getAudit(s.db, hash);
        return { hash, verdict: a?.verdict ?? null, failing: a ? a.checks.filter((c) => c.status === 'fail').map((c) => c.id) : [], createdAt: a?.createdAt ?? null };
      }),
  };
}
