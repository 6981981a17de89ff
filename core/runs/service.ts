/**
 * Model runs as records: each run's configuration and status, one row per episode, and what it
 * measured per environment (recomputed from the episode rows each time one lands, so what is
 * stored never disagrees with the episodes). Listing, one run in full, and two runs compared.
 */
import { DomainError } from '../errors';
import { ESTIMATOR_LABEL } from '../episodes/estimator';
import type { JobResult } from '../episodes/regret';
import { difficultyScore, FRONTIER, measure, type Measurement, type RunEpisodeRow } from './measure';
import { RunStore, type NewRun, type RunEnvRecord, type RunFilter, type RunRecord, type RunStatus } from './runStore';
import type { Db } from '../memory/db';
import type { EnvCatalog } from '../episodes/catalog';

export interface RunServiceDeps {
  db: Db;
  /** Share of each arm's seeds that must play successfully for a number to count (setting runMinSuccess). */
  minShare(): number;
  /** Names and hints of library versions (a hintless version has no regret measured: no hinted arm). */
  catalog: Pick<EnvCatalog, 'byHash'>;
  changed?(runId: string): void;
}

export interface RunEnvView extends Measurement {
  envHash: string;
  envName: string | null;
  episodes: RunEpisodeRow[];
}

export interface RunView {
  run: RunRecord;
  live: boolean;
  episodes: { total: number; ok: number; failed: number; expected: number };
  /** "2 of 16 episodes failed" when any did, else null. */
  failedText: string | null;
  envs: RunEnvView[];
}

export interface CompareRow {
  envHash: string;
  envName: string | null;
  a: Pick<Measurement, 'regret' | 'rHint' | 'rNoHint' | 'winRate' | 'failed' | 'notMeasured' | 'hintFailed'> | null;
  b: Pick<Measurement, 'regret' | 'rHint' | 'rNoHint' | 'winRate' | 'failed' | 'notMeasured' | 'hintFailed'> | null;
  regretDelta: number | null;
  winRateDelta: number | null;
}

export class RunService {
  readonly store: RunStore;
  /** Runs this process is playing now (a 'running' record not here was interrupted). */
  private readonly live = new Set<string>();

  constructor(private readonly d: RunServiceDeps) {
    this.store = new RunStore(d.db);
  }

  /**
   * A workbench that starts finds the runs it was playing when it stopped: they are cancelled,
   * resumable. Not those another live process plays (`elsewhere`: the CLI's regret sweep on the same file).
   */
  interruptStale(elsewhere?: (run: RunRecord) => boolean): number {
    const playedElsewhere = (id: string): boolean => {
      const r = elsewhere ? this.store.get(id) : null;
      return !!r && elsewhere!(r);
    };
    return this.store.interruptRunning(this.live, undefined, playedElsewhere);
  }

  private nameOf(hash: string): string | null {
    return this.d.catalog.byHash(hash)?.name ?? null;
  }

  isLive(id: string): boolean {
    return this.live.has(id);
  }

  /** Starts (or, with a known id, resumes) a run record; returns the recorder for its episodes. */
  begin(spec: NewRun): (r: JobResult) => void {
    if (this.live.has(spec.id)) throw new DomainError('conflict', `Run ${spec.id} is already running`);
    const known = this.store.get(spec.id);
    if (known && known.model !== spec.model) throw new DomainError('conflict', `Run ${spec.id} measured ${known.model}; a resume must use the same model, not ${spec.model}`);
    this.d.db.transaction(() => {
      this.store.start(spec);
      for (const h of spec.hashes) if (!known) this.refreshEnv(spec, h);
    })();
    this.live.add(spec.id);
    this.d.changed?.(spec.id);
    const run = known ?? this.store.get(spec.id)!;
    return (r) => {
      this.d.db.transaction(() => {
        // An unseeded play (SPADE's unhinted arm) is kept by its place among the unseeded plays.
        this.store.recordEpisode(spec.id, { envHash: r.hash, hint: r.hint, seed: r.seed ?? r.slot ?? 0, ...(r.seed === null ? { unseeded: true } : {}), status: r.failed ? 'failed' : 'ok', ret: r.failed ? null : r.ret, endedBy: r.endedBy, error: r.error, episodeId: r.episodeId });
        this.refreshEnv(run, r.hash);
      })();
      this.d.changed?.(spec.id);
    };
  }

  /**
   * One episode played outside the library (an environment served by another OpenEnv server,
   * core/openenv/remoteRun.ts): no library episode to point at, so the row carries none.
   */
  recordRow(runId: string, row: RunEpisodeRow): void {
    const run = this.store.get(runId);
    if (!run) throw new DomainError('not_found', `No run ${runId}`);
    this.d.db.transaction(() => {
      this.store.recordEpisode(runId, row);
      this.refreshEnv(run, row.envHash);
    })();
    this.d.changed?.(runId);
  }

  end(id: string, status: Exclude<RunStatus, 'running'>, error: string | null = null): void {
    this.live.delete(id);
    this.store.finish(id, status, error);
    this.d.changed?.(id);
  }

  /** No hint to play with (none given, none stored): SPADE's "hint generation failed": only the unhinted arm is played, and regret is not measured. */
  private hintless(run: Pick<RunRecord, 'config'>, hash: string): boolean {
    return !run.config.hintText && !this.d.catalog.byHash(hash)?.hint;
  }

  private measureEnv(run: Pick<RunRecord, 'id' | 'arms' | 'seeds' | 'config' | 'estimator'>, hash: string, rows: RunEpisodeRow[]): Measurement {
    return measure(rows, { arms: run.arms, requested: run.seeds, minShare: this.d.minShare(), hintFailed: this.hintless(run, hash), estimator: run.estimator });
  }

  private refreshEnv(run: Pick<RunRecord, 'id' | 'arms' | 'seeds' | 'model' | 'config' | 'estimator'>, hash: string): void {
    const m = this.measureEnv(run, hash, this.store.episodes(run.id, hash));
    this.store.putEnv({ runId: run.id, envHash: hash, envName: this.nameOf(hash), model: run.model, rHint: m.rHint, rNoHint: m.rNoHint, regret: m.regret, winRate: m.winRate, hintFailed: m.hintFailed, okHint: m.okHint, okNoHint: m.okNoHint, failed: m.failed, seeds: m.seeds, estimator: run.estimator });
  }

  list(f: Partial<RunFilter>) {
    const r = this.store.list({ limit: 100, offset: 0, ...f });
    return { total: r.total, models: this.store.models(), rows: r.rows.map((run) => ({ ...run, live: this.live.has(run.id), ...this.countsOf(run) })) };
  }

  private countsOf(run: RunRecord) {
    const c = this.store.counts(run.id);
    // What will be played: a version without a hint plays its unhinted arm alone (core/episodes/regretRuns.ts, regretSweep.ts).
    // SPADE's estimator: its hinted plays (none without a hint) and its unseeded unhinted ones.
    const sp = run.config.spade;
    const expected = run.hashes.reduce((n, h) => n + (run.estimator === 'spade' && sp ? (this.hintless(run, h) ? 0 : sp.hintPlays) + sp.noHintPlays : run.seeds * (this.hintless(run, h) ? 1 : run.arms.length)), 0);
    return { episodes: { total: c.ok + c.failed, ok: c.ok, failed: c.failed, expected }, failedText: c.failed ? `${c.failed} of ${c.ok + c.failed} episodes failed` : null };
  }

  get(id: string): RunView {
    const run = this.store.get(id);
    if (!run) throw new DomainError('not_found', `No run ${id}`);
    const all = this.store.episodes(id);
    // A version outside the library (an OpenEnv server's environment) keeps the name its run stored.
    const stored = new Map(this.store.envs(id).map((e) => [e.envHash, e.envName]));
    const envs = run.hashes.map((h) => {
      const rows = all.filter((e) => e.envHash === h);
      return { envHash: h, envName: this.nameOf(h) ?? stored.get(h) ?? null, ...this.measureEnv(run, h, rows), episodes: rows };
    });
    return { run, live: this.live.has(id), ...this.countsOf(run), envs };
  }

  /** Two runs per environment (every version either played): both measurements and B - A. */
  compare(a: string, b: string): { a: RunView; b: RunView; rows: CompareRow[]; disagree: CompareRow[]; shared: number } {
    const A = this.get(a);
    const B = this.get(b);
    // Two estimators' regrets are different quantities: B - A across them would read as a change of model.
    if (A.run.estimator !== B.run.estimator) {
      throw new DomainError('invalid_input', `Run ${a} measured ${ESTIMATOR_LABEL[A.run.estimator]} and run ${b} ${ESTIMATOR_LABEL[B.run.estimator]}: their regrets are not comparable; compare runs of the same estimator`);
    }
    const pick = (e: RunEnvView | undefined) => (e ? { regret: e.regret, rHint: e.rHint, rNoHint: e.rNoHint, winRate: e.winRate, failed: e.failed, notMeasured: e.notMeasured, hintFailed: e.hintFailed } : null);
    const hashes = [...new Set([...A.run.hashes, ...B.run.hashes])];
    const rows: CompareRow[] = hashes.map((h) => {
      const ea = A.envs.find((e) => e.envHash === h);
      const eb = B.envs.find((e) => e.envHash === h);
      const ra = pick(ea);
      const rb = pick(eb);
      const delta = (x: number | null | undefined, y: number | null | undefined) => (x === null || x === undefined || y === null || y === undefined ? null : y - x);
      return { envHash: h, envName: ea?.envName ?? eb?.envName ?? null, a: ra, b: rb, regretDelta: delta(ra?.regret, rb?.regret), winRateDelta: delta(ra?.winRate, rb?.winRate) };
    });
    const score = (r: CompareRow) => Math.max(Math.abs(r.regretDelta ?? 0), Math.abs(r.winRateDelta ?? 0));
    const disagree = rows.filter((r) => r.regretDelta !== null || r.winRateDelta !== null).sort((x, y) => score(y) - score(x)).filter((r) => score(r) > 0).slice(0, 10);
    return { a: A, b: B, rows, disagree, shared: rows.filter((r) => r.a && r.b).length };
  }

  /** Every measurement of these versions, newest first, with SPADE's difficulty and frontier band. */
  measurements(hashes: string[]): (RunEnvRecord & { difficulty: number | null; frontier: boolean; runStatus: RunStatus | null; seedStart: number | null })[] {
    const runs = new Map<string, RunRecord | null>();
    return this.store.envMeasurements(hashes).map((m) => {
      if (!runs.has(m.runId)) runs.set(m.runId, this.store.get(m.runId));
      const run = runs.get(m.runId);
      return { ...m, difficulty: difficultyScore(m.winRate), frontier: m.winRate !== null && m.winRate >= FRONTIER.lo && m.winRate <= FRONTIER.hi, runStatus: run?.status ?? null, seedStart: run?.seedStart ?? null };
    });
  }

  latest(hash: string, model?: string | null): RunEnvRecord | null {
    return this.store.latest(hash, model);
  }

  delete(id: string): boolean {
    if (this.live.has(id)) throw new DomainError('conflict', `Run ${id} is running: cancel it first`);
    const ok = this.store.delete(id);
    if (ok) this.d.changed?.(id);
    return ok;
  }
}
