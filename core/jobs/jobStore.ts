import type { Db } from '../memory/db';
import type { GameReturns, MetricPoint } from '../api/spadeMetrics';
import type { JobRecord, JobSpec, JobState } from './types';

export type { MetricPoint } from '../api/spadeMetrics';

interface Row {
  id: string;
  name: string;
  backend: JobRecord['backend'];
  host: string | null;
  recipe: string | null;
  spec: string;
  external_id: string | null;
  state: JobState;
  detail: string;
  exit_code: number | null;
  remote_log: string | null;
  log_offset: number;
  local_log_size: number;
  metrics_offset: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  updated_at: string;
}

function fromRow(r: Row): JobRecord {
  return {
    id: r.id,
    name: r.name,
    backend: r.backend,
    host: r.host,
    recipe: r.recipe,
    spec: JSON.parse(r.spec) as JobSpec,
    externalId: r.external_id,
    state: r.state,
    detail: r.detail,
    exitCode: r.exit_code,
    remoteLog: r.remote_log,
    logOffset: r.log_offset,
    localLogSize: r.local_log_size,
    metricsOffset: r.metrics_offset,
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    updatedAt: r.updated_at,
  };
}

/** Jobs, their metric points and the files already brought back, in the workbench database. */
export class JobStore {
  constructor(private readonly db: Db) {}

  insert(job: JobRecord): void {
    this.db
      .prepare(
        `INSERT INTO jobs (id, name, backend, host, recipe, spec, external_id, state, detail, exit_code, remote_log,
          log_offset, local_log_size, metrics_offset, created_at, started_at, finished_at, updated_at)
         VALUES (@id, @name, @backend, @host, @recipe, @spec, @externalId, @state, @detail, @exitCode, @remoteLog,
          @logOffset, @localLogSize, @metricsOffset, @createdAt, @startedAt, @finishedAt, @updatedAt)`,
      )
      .run({ ...job, spec: JSON.stringify(job.spec) });
  }

  get(id: string): JobRecord | null {
    const r = this.db.prepare('SELECT * FROM jobs WHERE id = ?').get(id) as Row | undefined;
    return r ? fromRow(r) : null;
  }

  list(): JobRecord[] {
    return (this.db.prepare('SELECT * FROM jobs ORDER BY created_at DESC, id DESC').all() as Row[]).map(fromRow);
  }

  update(id: string, patch: Partial<Pick<JobRecord, 'externalId' | 'state' | 'detail' | 'exitCode' | 'remoteLog' | 'startedAt' | 'finishedAt'>>): void {
    const cols: Record<string, string> = {
      externalId: 'external_id',
      state: 'state',
      detail: 'detail',
      exitCode: 'exit_code',
      remoteLog: 'remote_log',
      startedAt: 'started_at',
      finishedAt: 'finished_at',
    };
    const sets: string[] = [];
    const vals: Record<string, unknown> = { id, updatedAt: new Date().toISOString() };
    for (const [k, v] of Object.entries(patch)) {
      const col = cols[k];
      if (!col || v === undefined) continue;
      sets.push(`${col} = @${k}`);
      vals[k] = v;
    }
    if (sets.length === 0) return;
    this.db.prepare(`UPDATE jobs SET ${sets.join(', ')}, updated_at = @updatedAt WHERE id = @id`).run(vals);
  }

  /** What the run told us about itself (the Ray job a launch script submitted) joins its spec. */
  setSpec(id: string, spec: JobSpec): void {
    this.db.prepare('UPDATE jobs SET spec = ?, updated_at = ? WHERE id = ?').run(JSON.stringify(spec), new Date().toISOString(), id);
  }

  /** Offsets move together with the mirror and the metric points (and [REGRET] games) parsed from the same bytes. */
  commitLog(id: string, logOffset: number, localLogSize: number, points: MetricPoint[], games: GameReturns[] = []): void {
    const upd = this.db.prepare('UPDATE jobs SET log_offset = ?, local_log_size = ?, updated_at = ? WHERE id = ?');
    this.db.transaction(() => {
      this.insertPoints(id, points);
      this.insertGames(id, games);
      upd.run(logOffset, localLogSize, new Date().toISOString(), id);
    })();
  }

  /** Runs `fn` under SQLite's write lock: no other process commits a job's log meanwhile. */
  withWriteLock<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  /**
   * Takes the log's bytes [from, to) for this process, or returns null when another process (the app
   * and the CLI may follow the same job on one database) has already taken them. The check, the
   * mirror's append and the offsets happen under SQLite's write lock, so each byte reaches the
   * mirror once.
   */
  claimLog(id: string, from: number, to: number, append: () => number, points: MetricPoint[], games: GameReturns[]): number | null {
    const cur = this.db.prepare('SELECT log_offset FROM jobs WHERE id = ?');
    return this.db
      .transaction((): number | null => {
        if ((cur.get(id) as { log_offset: number } | undefined)?.log_offset !== from) return null;
        const size = append();
        this.commitLog(id, to, size, points, games);
        return size;
      })
      .immediate();
  }

  commitMetricsFile(id: string, offset: number, points: MetricPoint[]): void {
    const upd = this.db.prepare('UPDATE jobs SET metrics_offset = ? WHERE id = ?');
    this.db.transaction(() => {
      this.insertPoints(id, points);
      upd.run(offset, id);
    })();
  }

  private insertPoints(id: string, points: MetricPoint[]): void {
    if (!points.length) return;
    // A rollout's several lines (two perf lines, Megatron's rollout line) merge under its id.
    const ins = this.db.prepare('INSERT OR REPLACE INTO job_metrics (job_id, step, key, value, axis) VALUES (?, ?, ?, ?, ?)');
    for (const p of points) ins.run(id, p.step, p.key, p.value, p.axis);
  }

  private insertGames(id: string, games: GameReturns[]): void {
    if (!games.length) return;
    const ins = this.db.prepare('INSERT OR REPLACE INTO job_games (job_id, game, r_hint, r_no_hint, regret) VALUES (?, ?, ?, ?, ?)');
    for (const g of games) ins.run(id, g.game, g.rHint, g.rNoHint, g.regret);
  }

  metrics(id: string, keys?: string[]): MetricPoint[] {
    if (keys && keys.length) {
      const q = this.db.prepare(`SELECT axis, step, key, value FROM job_metrics WHERE job_id = ? AND key IN (${keys.map(() => '?').join(',')}) ORDER BY key, step`);
      return q.all(id, ...keys) as MetricPoint[];
    }
    return this.db.prepare('SELECT axis, step, key, value FROM job_metrics WHERE job_id = ? ORDER BY key, step').all(id) as MetricPoint[];
  }

  /** The games' returns and regret SPADE printed in this job's log ([REGRET] lines), by file name. */
  games(id: string): GameReturns[] {
    return this.db.prepare('SELECT game, r_hint AS rHint, r_no_hint AS rNoHint, regret FROM job_games WHERE job_id = ? ORDER BY game').all(id) as GameReturns[];
  }

  metricKeys(id: string): string[] {
    return (this.db.prepare('SELECT DISTINCT key FROM job_metrics WHERE job_id = ? ORDER BY key').all(id) as { key: string }[]).map((r) => r.key);
  }

  fileSeen(id: string, path: string): { size: number; mtime: number } | null {
    return (this.db.prepare('SELECT size, mtime FROM job_files WHERE job_id = ? AND path = ?').get(id, path) as { size: number; mtime: number } | undefined) ?? null;
  }

  recordFile(id: string, path: string, size: number, mtime: number, rolloutStep: number | null, result: string): void {
    this.db
      .prepare('INSERT OR REPLACE INTO job_files (job_id, path, size, mtime, rollout_step, imported_at, result) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(id, path, size, mtime, rolloutStep, new Date().toISOString(), result);
  }

  files(id: string): { path: string; rolloutStep: number | null; result: string }[] {
    return (this.db.prepare('SELECT path, rollout_step AS rolloutStep, result FROM job_files WHERE job_id = ? ORDER BY path').all(id) as {
      path: string;
      rolloutStep: number | null;
      result: string;
    }[]);
  }

  remove(id: string): void {
    this.db.prepare('DELETE FROM jobs WHERE id = ?').run(id);
  }
}
