import type { Db } from './db';
import { attachStats } from './repository';
import { envIdInJob, jobGameReturns } from './runStatsStore';

/**
 * A game's R(hint), R(no hint) and regret as SPADE printed them in the job's log
 * (`[REGRET] <game>.py: ...`, spade/core/orchestrator.py:2051), attached to the environment that
 * same job brought back from a file of that name. Returns how many environments changed.
 * Idempotent: called after every round that brought files or [REGRET] lines.
 */
export function attachRunReturns(db: Db, jobId: string): number {
  let changed = 0;
  const games = jobGameReturns(db, jobId);
  if (!games.length) return 0;
  db.transaction(() => {
    for (const g of games) {
      const envId = envIdInJob(db, jobId, g.game);
      if (envId === null) continue;
      if (attachStats(db, envId, { winRate: null, regret: g.regret, rHint: g.rHint, rNoHint: g.rNoHint })) changed++;
    }
  }).immediate();
  return changed;
}
