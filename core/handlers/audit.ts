import { ApiError } from '../api';
import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';
import { AuditService } from '../audit/service';
import { envIdsWith, listBatches, poolSummary } from '../audit/store';
import { validateCheckIds } from '../audit/types';

// One audit service per Services, made on first use so apps that never audit start no Python.
const services = new WeakMap<Services, AuditService>();
export function auditService(s: Services): AuditService {
  let a = services.get(s);
  if (!a) {
    a = new AuditService({ db: s.db, events: s.events, maxTurns: () => s.settings.get().maxTurns, log: (level, m) => s.log(level, 'audit', m) });
    services.set(s, a);
    const svc = a;
    s.onClose(() => svc.close());
    s.addStatusProvider(() => {
      const n = svc.busy();
      return n ? [{ name: 'audit', state: 'busy' as const, detail: `${n} batch${n > 1 ? 'es' : ''} running` }] : [];
    });
  }
  return a;
}

function checkIds(ids: string[] | undefined): void {
  const bad = ids ? validateCheckIds(ids) : [];
  if (bad.length) throw new ApiError('invalid_input', `Unknown check id(s): ${bad.join(', ')}`);
}

type AuditCall = 'audit.run' | 'audit.batch' | 'audit.cancel' | 'audit.resume' | 'audit.batches' | 'audit.results' | 'audit.summary' | 'audit.environments';

export function auditHandlers(s: Services): Pick<Handlers, AuditCall> {
  return {
    'audit.run': async ({ hash, checks, callTimeoutSec }) => {
      checkIds(checks);
      const r = await auditService(s).runOne(hash, { checks, callTimeoutSec });
      if (!r) throw new ApiError('not_found', `No environment version ${hash.slice(0, 12)}`);
      return r;
    },
    'audit.batch': ({ envIds, all, checks, callTimeoutSec }) => {
      checkIds(checks);
      if (!all && !envIds) throw new ApiError('invalid_input', 'Give envIds or all: true');
      return auditService(s).startBatch({ envIds, all }, { checks, callTimeoutSec });
    },
    'audit.cancel': ({ batchId }) => ({ cancelled: auditService(s).cancel(batchId) }),
    'audit.resume': ({ batchId }) => {
      const r = auditService(s).resume(batchId);
      if (!r) throw new ApiError('not_found', `No audit batch ${batchId}`);
      return r;
    },
    'audit.batches': ({ limit }) => listBatches(s.db, limit ?? 20),
    'audit.results': ({ hash }) => auditService(s).results(hash),
    'audit.summary': () => poolSummary(s.db),
    'audit.environments': ({ checkId, status }) => ({ ids: envIdsWith(s.db, checkId, status) }),
  };
}
