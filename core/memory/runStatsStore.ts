import type { Db } from './db';
import { stmt } from './statements';

/**
 * Finding a run's own game by its file name. SPADE names games `game_{rollout:05d}_{index:03d}_{skill}`
 * in every run, so a name alone says nothing across the library: these look only among the files a
 * job brought back, or under one output folder.
 */
const likeEscape = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The environment a job brought back from a file of this name (newest sighting), or null. */
export function envIdInJob(db: Db, jobId: string, name: string): number | null {
  const r = stmt(db, "SELECT env_id FROM env_sources WHERE job_id = ? AND (path = ? OR path LIKE ? ESCAPE '\\') ORDER BY seen_at DESC LIMIT 1").get(
    jobId,
    name,
    `%/${likeEscape(name)}`,
  ) as { env_id: number } | undefined;
  return r?.env_id ?? null;
}

/** The environment imported from exactly this path, or from a file of this name under `folder`, or null. */
export function envIdUnderFolder(db: Db, folder: string, name: string, exactPath: string | null): number | null {
  if (exactPath) {
    const exact = stmt(db, 'SELECT env_id FROM env_sources WHERE path = ? ORDER BY seen_at DESC LIMIT 1').get(exactPath) as { env_id: number } | undefined;
    if (exact) return exact.env_id;
  }
  const dir = folder.endsWith('/') ? folder : `${folder}/`;
  const r = stmt(db, "SELECT env_id FROM env_sources WHERE path LIKE ? ESCAPE '\\' AND path LIKE ? ESCAPE '\\' ORDER BY seen_at DESC LIMIT 1").get(
    `${likeEscape(dir)}%`,
    `%/${likeEscape(name)}`,
  ) as { env_id: number } | undefined;
  return r?.env_id ?? null;
}

/** The games' returns a job's log gave ([REGRET] lines, kept by core/jobs/jobStore.ts). */
export function jobGameReturns(db: Db, jobId: string): { game: string; rHint: number | null; rNoHint: number | null; regret: number | null }[] {
  return stmt(db, 'SELECT game, r_hint AS rHint, r_no_hint AS rNoHint, regret FROM job_games WHERE job_id = ? ORDER BY game').all(jobId) as {
    game: string;
    rHint: number | null;
    rNoHint: number | null;
    regret: number | null;
  }[];
}
