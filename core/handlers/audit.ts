import type { CallName } from '../api';
import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';
import { validateCheckIds } from '../audit/types';
import { DomainError } from '../errors';
import { replayRecipe } from '../audit/evidence';
import { playRecipe } from '../audit/replay';

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
    'audit.batches': ({ limit }) => s.audit.batches(limit ?? 20),
    'audit.results': ({ hash }) => s.audit.results(hash),
    'audit.replay': async ({ hash, checkId, on }) => {
      const a = s.audit.results(hash);
      if (!a) throw new DomainError('not_found', `Version ${hash.slice(0, 12)} has no stored audit`);
      const c = a.checks.find((x) => x.id === checkId);
      if (!c) throw new DomainError('not_found', `The audit of ${hash.slice(0, 12)} has no check ${checkId}`);
      const r = replayRecipe(c, { runtime: a.runtime });
      if (!r) throw new DomainError('invalid_input', `The evidence of ${checkId} names no episode to replay (no seed and actions)`);
      const played = await playRecipe(s.episodes, on ?? hash, r, `audit ${checkId}`);
      return { ...played, seed: r.seed, resetSeed: r.resetSeed, actions: r.actions.length, runtime: r.runtime, mode: r.mode };
    },
    'audit.summary': () => s.audit.summary(),
    'audit.environments': ({ checkId, status }) => ({ ids: s.audit.environmentsWith(checkId, status) }),
    'audit.verdicts': ({ hashes }) => s.audit.verdicts(hashes),
    'audit.poolStart': ({ query, target, checks }) => s.poolAudit.start(query, target, checks),
    'audit.sweeps': ({ limit }) => s.poolAudit.list(limit ?? 20),
    'audit.sweepResume': ({ sweepId }) => s.poolAudit.resume(sweepId),
    'audit.sweepCancel': ({ sweepId }) => s.poolAudit.cancel(sweepId),
    'audit.sweepResults': ({ sweepId }) => s.poolAudit.results(sweepId),
    'audit.sweepHosts': () => ({ hosts: s.poolAudit.hosts() }),
  };
}
