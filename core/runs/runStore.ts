/**
 * SQLite persistence of model runs (migration 12): the run, one row per episode, and what it
 * measured per environment. Every episode row is written when the episode ends, so a crash keeps
 * all that was played; a resumed run replaces a failed row with the replayed episode's.
 */
import type { Db } from '../memory/db';
import type { Measurement, RunEpisodeRow } from './measure';
import type { RegretEstimator } from '../episodes/estimator';

export type RunStatus = 'running' | 'done' | 'cancelled' | 'failed';

export interface RunConfig {
  /** The endpoint as the run used it, without a key (only the secret's name, if any). */
  endpoint: Record<string, unknown>;
  sampling: { temperature: number; topP: number; topK: number | null; maxTokens: number; thinking: boolean | null };
  hintText?: string | null;
  /** SPADE's estimator's settings (runs whose estimator is `spade`): its counts and the hash seed of its hinted seeds. */
  spade?: { hintPlays: number; noHintPlays: number; hashSeed: number; hashAlgo: string; thinking: { hint: boolean; nohint: boolean } | null; gamePaths?: Record<string, string> };
}

export interface NewRun {
  id: string;
  model: string;
  endpoint: string;
  config: RunConfig;
  hintSource: string;
  seeds: number;
  seedStart: number;
  arms: ('hint' | 'nohint')[];
  maxTurns: number;
  runtime: string;
  selection: string | null;
  hashes: string[];
  /** Which regret the run measures (migration 19; runs stored before it are `paired`). */
  estimator: RegretEstimator;
}

export interface RunRecord extends NewRun {
  status: RunStatus;
  error: string | null;
  startedAt: string;
  endedAt: string | null;
  updatedAt: string;
}

export interface RunEnvRecord extends Omit<Measurement, 'notMeasured' | 'difficulty'> {
  runId: string;
  envHash: string;
  envName: string | null;
  model: string;
  updatedAt: string;
  estimator: RegretEstimator;
}

interface RunRow {
  id: string;
  model: string;
  endpoint: string;
  config: string;
  hint_source: string;
  seeds: number;
  seed_start: number;
  arms: string;
  max_turns: number;
  runtime: string;
  selection: string | null;
  hashes: string;
  estimator: RegretEstimator;
  status: RunStatus;
  error: string | null;
  started_at: string;
  ended_at: string | null;
  updated_at: string;
}

interface EnvRow {
  run_id: string;
  env_hash: string;
  env_name: string | null;
  model: string;
  r_hint: number | null;
  r_no_hint: number | null;
  regret: number | null;
  win_rate: number | null;
  hint_failed: number;
  ok_hint: number;
  ok_no_hint: number;
  failed: number;
  seeds: string;
  updated_at: string;
  estimator: RegretEstimator;
}

interface EpRow {
  env_hash: string;
  hint: number;
  seed: number;
  status: 'ok' | 'failed';
  ret: number | null;
  ended_by: string;
  error: string | null;
  episode_id: number | null;
  unseeded: number;
}

function toRun(r: RunRow): RunRecord {
  return {
    id: r.id,
    model: r.model,
    endpoint: r.endpoint,
    config: JSON.parse(r.config) as RunConfig,
    hintSource: r.hint_source,
    seeds: r.seeds,
    seedStart: r.seed_start,
    arms: JSON.parse(r.arms) as ('hint' | 'nohint')[],
    maxTurns: r.max_turns,
    runtime: r.runtime,
    selection: r.selection,
    hashes: JSON.parse(r.hashes) as string[],
    estimator: r.estimator,
    status: r.status,
    error: r.error,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    updatedAt: r.updated_at,
  };
}

function toEnv(r: EnvRow): RunEnvRecord {
  return {
    runId: r.run_id,
    envHash: r.env_hash,
    envName: r.env_name,
    model: r.model,
    rHint: r.r_hint,
    rNoHint: r.r_no_hint,
    regret: r.regret,
    winRate: r.win_rate,
    hintFailed: r.hint_failed === 1,
    okHint: r.ok_hint,
    okNoHint: r.ok_no_hint,
    failed: r.failed,
    seeds: JSON.parse(r.seeds) as number[],
    updatedAt: r.updated_at,
    estimator: r.estimator,
  };
}

function toEpisode(r: EpRow): RunEpisodeRow {
  return { envHash: r.env_hash, hint: r.hint === 1, seed: r.seed, ...(r.unseeded === 1 ? { unseeded: true } : {}), status: r.status, ret: r.ret, endedBy: r.ended_by, error: r.error, episodeId: r.episode_id };
}

export interface RunFilter {
  model?: string | undefined;
  envHash?: string | undefined;
  selection?: string | undefined;
  status?: RunStatus | undefined;
  from?: string | undefined;
  to?: string | undefined;
  limit: number;
  offset: number;
}

export class RunStore {
  constructor(private readonly db: Db) {}

  /** A new run, or (a resume) the same id set running again with its configuration kept. */
  start(r: NewRun, now = new Date().toISOString()): void {
    this.db
      .prepare(
        `INSERT INTO model_runs (id, model, endpoint, config, hint_source, seeds, seed_start, arms, max_turns, runtime, selection, hashes, estimator, status, started_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)
         ON CONFLICT(id) DO UPDATE SET status = 'running', error = NULL, ended_at = NULL, updated_at = excluded.updated_at`,
      )
      .run(r.id, r.model, r.endpoint, JSON.stringify(r.config), r.hintSource, r.seeds, r.seedStart, JSON.stringify(r.arms), r.maxTurns, r.runtime, r.selection, JSON.stringify(r.hashes), r.estimator, now, now);
  }

  finish(id: string, status: Exclude<RunStatus, 'running'>, error: string | null = null, now = new Date().toISOString()): void {
    this.db.prepare(`UPDATE model_runs SET status = ?, error = ?, ended_at = ?, updated_at = ? WHERE id = ?`).run(status, error, now, now, id);
  }

  /** Runs left 'running' by a workbench that stopped: nothing plays them any more. */
  interruptRunning(live: Set<string>, now = new Date().toISOString(), elsewhere: (id: string) => boolean = () => false): number {
    const rows = this.db.prepare(`SELECT id FROM model_runs WHERE status = 'running'`).all() as { id: string }[];
    let n = 0;
    for (const { id } of rows) {
      if (live.has(id) || elsewhere(id)) continue;
      this.db.prepare(`UPDATE model_runs SET status = 'cancelled', error = ?, ended_at = ?, updated_at = ? WHERE id = ? AND status = 'running'`).run('interrupted: the workbench stopped while it ran (resume plays the rest)', now, now, id);
      n++;
    }
    return n;
  }

  get(id: string): RunRecord | null {
    const r = this.db.prepare(`SELECT * FROM model_runs WHERE id = ?`).get(id) as RunRow | undefined;
    return r ? toRun(r) : null;
  }

  list(f: RunFilter): { total: number; rows: RunRecord[] } {
    const where: string[] = [];
    const args: unknown[] = [];
    if (f.model) (where.push('model = ?'), args.push(f.model));
    if (f.status) (where.push('status = ?'), args.push(f.status));
    if (f.selection) (where.push('selection = ?'), args.push(f.selection));
    if (f.envHash) (where.push('id IN (SELECT run_id FROM model_run_envs WHERE env_hash = ?)'), args.push(f.envHash));
    if (f.from) (where.push('started_at >= ?'), args.push(f.from));
    if (f.to) (where.push('started_at <= ?'), args.push(f.to));
    const w = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const total = (this.db.prepare(`SELECT count(*) AS n FROM model_runs ${w}`).get(...args) as { n: number }).n;
    const rows = this.db.prepare(`SELECT * FROM model_runs ${w} ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?`).all(...args, f.limit, f.offset) as RunRow[];
    return { total, rows: rows.map(toRun) };
  }

  models(): string[] {
    return (this.db.prepare(`SELECT DISTINCT model FROM model_runs ORDER BY model`).all() as { model: string }[]).map((r) => r.model);
  }

  recordEpisode(runId: string, e: RunEpisodeRow, now = new Date().toISOString()): void {
    this.db
      .prepare(
        `INSERT INTO model_run_episodes (run_id, env_hash, hint, seed, unseeded, status, ret, ended_by, error, episode_id, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(run_id, env_hash, hint, seed) DO UPDATE SET status = excluded.status, ret = excluded.ret, ended_by = excluded.ended_by, error = excluded.error, episode_id = excluded.episode_id, recorded_at = excluded.recorded_at`,
      )
      .run(runId, e.envHash, e.hint ? 1 : 0, e.seed, e.unseeded ? 1 : 0, e.status, e.ret, e.endedBy, e.error, e.episodeId, now);
  }

  episodes(runId: string, envHash?: string): RunEpisodeRow[] {
    const rows = envHash
      ? (this.db.prepare(`SELECT * FROM model_run_episodes WHERE run_id = ? AND env_hash = ? ORDER BY seed, hint DESC`).all(runId, envHash) as EpRow[])
      : (this.db.prepare(`SELECT * FROM model_run_episodes WHERE run_id = ? ORDER BY env_hash, seed, hint DESC`).all(runId) as EpRow[]);
    return rows.map(toEpisode);
  }

  counts(runId: string): { ok: number; failed: number } {
    const r = this.db.prepare(`SELECT sum(status = 'ok') AS ok, sum(status = 'failed') AS failed FROM model_run_episodes WHERE run_id = ?`).get(runId) as { ok: number | null; failed: number | null };
    return { ok: r.ok ?? 0, failed: r.failed ?? 0 };
  }

  putEnv(e: Omit<RunEnvRecord, 'updatedAt'>, now = new Date().toISOString()): void {
    this.db
      .prepare(
        `INSERT INTO model_run_envs (run_id, env_hash, env_name, model, r_hint, r_no_hint, regret, win_rate, hint_failed, ok_hint, ok_no_hint, failed, seeds, estimator, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(run_id, env_hash) DO UPDATE SET env_name = excluded.env_name, r_hint = excluded.r_hint, r_no_hint = excluded.r_no_hint, regret = excluded.regret,
           win_rate = excluded.win_rate, hint_failed = excluded.hint_failed, ok_hint = excluded.ok_hint, ok_no_hint = excluded.ok_no_hint, failed = excluded.failed,
           seeds = excluded.seeds, estimator = excluded.estimator, updated_at = excluded.updated_at`,
      )
      .run(e.runId, e.envHash, e.envName, e.model, e.rHint, e.rNoHint, e.regret, e.winRate, e.hintFailed ? 1 : 0, e.okHint, e.okNoHint, e.failed, JSON.stringify(e.seeds), e.estimator, now);
  }

  envs(runId: string): RunEnvRecord[] {
    return (this.db.prepare(`SELECT * FROM model_run_envs WHERE run_id = ? ORDER BY env_name COLLATE NOCASE, env_hash`).all(runId) as EnvRow[]).map(toEnv);
  }

  /** Every measurement of these versions (any run, any model), newest first. */
  envMeasurements(hashes: string[]): RunEnvRecord[] {
    if (!hashes.length) return [];
    const rows = this.db
      .prepare(`SELECT * FROM model_run_envs WHERE env_hash IN (${hashes.map(() => '?').join(',')}) ORDER BY updated_at DESC`)
      .all(...hashes) as EnvRow[];
    return rows.map(toEnv);
  }

  /** The newest measurement of a version (by one model, or any) whose win rate is known. */
  latest(hash: string, model?: string | null): RunEnvRecord | null {
    const r = (
      model
        ? this.db.prepare(`SELECT * FROM model_run_envs WHERE env_hash = ? AND model = ? AND win_rate IS NOT NULL ORDER BY updated_at DESC LIMIT 1`).get(hash, model)
        : this.db.prepare(`SELECT * FROM model_run_envs WHERE env_hash = ? AND win_rate IS NOT NULL ORDER BY updated_at DESC LIMIT 1`).get(hash)
    ) as EnvRow | undefined;
    return r ? toEnv(r) : null;
  }

  delete(id: string): boolean {
    return this.db.prepare(`DELETE FROM model_runs WHERE id = ?`).run(id).changes > 0;
  }
}
