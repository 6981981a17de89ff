/**
 * SQLite persistence of episodes (migration 5). Steps are written as they happen, so a crash or
 * an app restart keeps everything played so far; the episode row carries running totals.
 */
import type { Db } from '../memory/db';
import { DomainError } from '../errors';
import type { EpisodeSummary, StepView } from '../api/calls/episodes';
import { injectHint } from './hint';
import { episodeReturn, type SpadeStep } from './spade';

export type Origin = EpisodeSummary['origin'];

export interface NewEpisode {
  envHash: string;
  envName: string | null;
  className: string | null;
  seed: number | null;
  hintEnabled: boolean;
  hintText: string | null;
  maxTurns: number;
  runtime: string;
  policy?: Record<string, unknown>;
  origin: Origin;
  label?: string;
  parentId?: number | null;
  meta?: Record<string, unknown>;
}

/** One stored reset or step of an episode (its row in `steps`); the harness's own reply to a step is core/api's StepReply. */
export interface StepRecord {
  idx: number;
  kind: 'reset' | 'step';
  action: string | null;
  rawAction: string | null;
  seed: number | null;
  observation: string | null;
  reward: number | null;
  terminated: boolean;
  truncated: boolean;
  info: Record<string, unknown>;
  error: StepView['error'];
  state: unknown;
  types: string[] | null;
  /** SPADE's wrapper conversion of a step (null for resets and recordings made before it existed). */
  spade?: SpadeStep | null;
}

interface EpisodeRow {
  id: number;
  env_hash: string;
  env_name: string | null;
  class_name: string | null;
  seed: number | null;
  hint_enabled: number;
  hint_text: string | null;
  max_turns: number;
  runtime: string;
  policy: string;
  origin: Origin;
  label: string;
  parent_id: number | null;
  step_count: number;
  total_return: number;
  terminated: number;
  truncated: number;
  divergence_step: number | null;
  meta: string;
  created_at: string;
  updated_at: string;
}

interface StepRow {
  episode_id: number;
  idx: number;
  kind: 'reset' | 'step';
  action: string | null;
  raw_action: string | null;
  seed: number | null;
  observation: string | null;
  reward: number | null;
  terminated: number;
  truncated: number;
  info: string;
  error: string | null;
  state: string | null;
  types: string | null;
  spade: string | null;
}

export type EpisodeMeta = Omit<EpisodeSummary, 'live' | 'cursor'>;

export interface EpisodeFilter {
  envHash?: string | undefined;
  origin?: Origin | undefined;
  envName?: string | undefined;
  policy?: string | undefined;
  hint?: boolean | undefined;
  outcome?: 'won' | 'lost' | 'truncated' | 'unfinished' | undefined;
  /** YYYY-MM-DD, UTC days, both inclusive. */
  since?: string | undefined;
  until?: string | undefined;
}

/** The start of a YYYY-MM-DD day (UTC), `plus` days later, as ISO (created_at is ISO, UTC). */
function dayStart(day: string, plus = 0): string {
  const d = new Date(`${day}T00:00:00.000Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== day) throw new DomainError('invalid_input', `Not a date: ${day}`);
  d.setUTCDate(d.getUTCDate() + plus);
  return d.toISOString();
}

function filterSql(f: EpisodeFilter): { sql: string[]; args: unknown[] } {
  const sql: string[] = [];
  const args: unknown[] = [];
  const add = (clause: string, ...a: unknown[]) => {
    sql.push(clause);
    args.push(...a);
  };
  if (f.envHash) add('env_hash = ?', f.envHash);
  if (f.origin) add('origin = ?', f.origin);
  if (f.envName) add(`COALESCE(env_name, class_name, '') = ?`, f.envName);
  if (f.policy) add(`COALESCE(json_extract(policy, '$.kind'), 'unknown') = ?`, f.policy);
  if (f.hint !== undefined) add('hint_enabled = ?', f.hint ? 1 : 0);
  // total_return is SPADE's episode return: the last reward when terminated, else 0.
  if (f.outcome === 'won') add('terminated = 1 AND total_return > 0');
  if (f.outcome === 'lost') add('terminated = 1 AND total_return <= 0');
  if (f.outcome === 'truncated') add('terminated = 0 AND truncated = 1');
  if (f.outcome === 'unfinished') add('terminated = 0 AND truncated = 0');
  if (f.since) add('created_at >= ?', dayStart(f.since));
  if (f.until) add('created_at < ?', dayStart(f.until, 1));
  return { sql, args };
}

/** Meta keys that say how an episode was made, which its forks keep. */
const FORK_KEEPS = ['mode', 'toolUse', 'hasSolution', 'effectiveMaxTurns', 'resetReference'] as const;

function toMeta(r: EpisodeRow): EpisodeMeta {
  return {
    id: r.id,
    envHash: r.env_hash,
    envName: r.env_name,
    className: r.class_name,
    seed: r.seed,
    hintEnabled: r.hint_enabled === 1,
    hintText: r.hint_text,
    maxTurns: r.max_turns,
    runtime: r.runtime,
    policy: JSON.parse(r.policy) as Record<string, unknown>,
    origin: r.origin,
    label: r.label,
    parentId: r.parent_id,
    stepCount: r.step_count,
    totalReturn: r.total_return,
    terminated: r.terminated === 1,
    truncated: r.truncated === 1,
    divergenceStep: r.divergence_step,
    meta: JSON.parse(r.meta) as Record<string, unknown>,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function rowToRecord(r: StepRow): StepRecord {
  return {
    idx: r.idx,
    kind: r.kind,
    action: r.action,
    rawAction: r.raw_action,
    seed: r.seed,
    observation: r.observation,
    reward: r.reward,
    terminated: r.terminated === 1,
    truncated: r.truncated === 1,
    info: JSON.parse(r.info) as Record<string, unknown>,
    error: r.error ? (JSON.parse(r.error) as StepView['error']) : null,
    state: r.state ? (JSON.parse(r.state) as unknown) : null,
    types: r.types ? (JSON.parse(r.types) as string[]) : null,
    spade: r.spade ? (JSON.parse(r.spade) as SpadeStep) : null,
  };
}

/** Timeline views with cumulative return and the agent-side (hinted) first observation. */
export function toViews(ep: Pick<EpisodeMeta, 'hintEnabled' | 'hintText'>, steps: StepRecord[], fromStart = true): StepView[] {
  let cum = 0;
  // The hint goes into the episode's first observation only (step 0).
  let firstReset = fromStart && steps[0]?.idx === 0;
  return steps.map((s) => {
    if (s.kind === 'reset') cum = 0;
    cum += s.reward ?? 0;
    let agentObservation = s.observation;
    // SPADE injects the hint into the first observation of the episode only.
    if (s.kind === 'reset' && firstReset && ep.hintEnabled && ep.hintText && s.observation !== null) agentObservation = injectHint(s.observation, ep.hintText);
    if (s.kind === 'reset') firstReset = false;
    return {
      idx: s.idx,
      kind: s.kind,
      action: s.action,
      rawAction: s.rawAction,
      seed: s.seed,
      observation: s.observation,
      agentObservation,
      reward: s.reward,
      terminated: s.terminated,
      truncated: s.truncated,
      info: s.info,
      error: s.error,
      types: s.types,
      cumReturn: cum,
      spade: s.spade ?? null,
    };
  });
}

/** A run's episodes; the expression matches migration 15's index `episodes_run`. */
export const EPISODES_BY_RUN_SQL = `SELECT * FROM episodes WHERE json_extract(meta, '$.run') = ? ORDER BY id`;

export class EpisodeStore {
  constructor(private readonly db: Db) {}

  create(e: NewEpisode, now = new Date().toISOString()): number {
    const r = this.db
      .prepare(
        `INSERT INTO episodes (env_hash, env_name, class_name, seed, hint_enabled, hint_text, max_turns, runtime, policy, origin, label, parent_id, meta, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        e.envHash,
        e.envName,
        e.className,
        e.seed,
        e.hintEnabled ? 1 : 0,
        e.hintText,
        e.maxTurns,
        e.runtime,
        JSON.stringify(e.policy ?? {}),
        e.origin,
        e.label ?? '',
        e.parentId ?? null,
        JSON.stringify(e.meta ?? {}),
        now,
        now,
      );
    return Number(r.lastInsertRowid);
  }

  /** Appends steps and refreshes the running totals in one transaction. */
  appendSteps(episodeId: number, steps: StepRecord[]): void {
    if (steps.length === 0) return;
    const ins = this.db.prepare(
      `INSERT OR REPLACE INTO episode_steps (episode_id, idx, kind, action, raw_action, seed, observation, reward, terminated, truncated, info, error, state, types, spade)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.db.transaction(() => {
      for (const s of steps) {
        ins.run(
          episodeId,
          s.idx,
          s.kind,
          s.action,
          s.rawAction,
          s.seed,
          s.observation,
          s.reward,
          s.terminated ? 1 : 0,
          s.truncated ? 1 : 0,
          JSON.stringify(s.info ?? {}),
          s.error ? JSON.stringify(s.error) : null,
          s.state === null || s.state === undefined ? null : JSON.stringify(s.state),
          s.types ? JSON.stringify(s.types) : null,
          s.spade ? JSON.stringify(s.spade) : null,
        );
      }
      this.refreshTotals(episodeId);
    })();
  }

  refreshTotals(episodeId: number): void {
    const steps = this.db
      .prepare(`SELECT idx, kind, reward, terminated, truncated, spade FROM episode_steps WHERE episode_id = ? ORDER BY idx`)
      .all(episodeId) as { idx: number; kind: string; reward: number | null; terminated: number; truncated: number; spade: string | null }[];
    // The last segment (after the latest reset) as SPADE scores it: its end is the converted
    // step's (a truthy 1 ends it), its return 0 unless it ended terminated, else the last reward
    // clamped. Steps recorded before the conversion existed count with their raw values.
    let last: SpadeStep | null = null;
    // Each earlier segment's return, scored the same way: a game won at step 1 and then reset shows
    // "return 0" for the new segment, and the list says what the earlier ones returned.
    const earlier: number[] = [];
    let resets = 0;
    for (const s of steps) {
      if (s.kind === 'reset') {
        if (resets > 0) earlier.push(last ? episodeReturn([{ kind: 'step', spade: last }]) : 0);
        resets++;
        last = null;
        continue;
      }
      last = s.spade
        ? (JSON.parse(s.spade) as SpadeStep)
        : { observation: '', reward: s.reward ?? 0, terminated: s.terminated === 1, truncated: s.truncated === 1, info: {} };
    }
    const ret = last ? episodeReturn([{ kind: 'step', spade: last }]) : 0;
    const now = new Date().toISOString();
    this.db
      .prepare(`UPDATE episodes SET step_count = ?, total_return = ?, terminated = ?, truncated = ?, updated_at = ? WHERE id = ?`)
      .run(steps.length, ret, last?.terminated ? 1 : 0, last?.truncated ? 1 : 0, now, episodeId);
    // Kept in meta (no migration), written only when it changes: most episodes have one reset and
    // never carry the key, and a step of a long episode does not rewrite a large meta for nothing.
    if (earlier.length) {
      const text = JSON.stringify(earlier);
      this.db.prepare(`UPDATE episodes SET meta = json_set(meta, '$.earlierReturns', json(?)) WHERE id = ? AND json(COALESCE(json_extract(meta, '$.earlierReturns'), 'null')) IS NOT json(?)`).run(text, episodeId, text);
    } else this.db.prepare(`UPDATE episodes SET meta = json_remove(meta, '$.earlierReturns') WHERE id = ? AND json_type(meta, '$.earlierReturns') IS NOT NULL`).run(episodeId);
  }

  setDivergence(episodeId: number, idx: number | null, meta?: Record<string, unknown>): void {
    if (meta) {
      const cur = this.meta(episodeId);
      this.db.prepare(`UPDATE episodes SET divergence_step = ?, meta = ? WHERE id = ?`).run(idx, JSON.stringify({ ...(cur?.meta ?? {}), ...meta }), episodeId);
    } else this.db.prepare(`UPDATE episodes SET divergence_step = ? WHERE id = ?`).run(idx, episodeId);
  }

  meta(id: number): EpisodeMeta | null {
    const r = this.db.prepare(`SELECT * FROM episodes WHERE id = ?`).get(id) as EpisodeRow | undefined;
    return r ? toMeta(r) : null;
  }

  list(opts: EpisodeFilter & { limit: number; offset: number }): { total: number; rows: EpisodeMeta[] } {
    const { sql, args } = filterSql(opts);
    const w = sql.length ? `WHERE ${sql.join(' AND ')}` : '';
    const total = (this.db.prepare(`SELECT COUNT(*) AS n FROM episodes ${w}`).get(...args) as { n: number }).n;
    const rows = this.db.prepare(`SELECT * FROM episodes ${w} ORDER BY id DESC LIMIT ? OFFSET ?`).all(...args, opts.limit, opts.offset) as EpisodeRow[];
    return { total, rows: rows.map(toMeta) };
  }

  /** The environment names and policy kinds of every recorded episode, with counts (the filters' choices). */
  facets(): { envNames: { value: string; count: number }[]; policies: { value: string; count: number }[] } {
    const envNames = this.db
      .prepare(`SELECT COALESCE(env_name, class_name, '') AS value, COUNT(*) AS count FROM episodes GROUP BY value HAVING value <> '' ORDER BY value COLLATE NOCASE`)
      .all() as { value: string; count: number }[];
    const policies = this.db
      .prepare(`SELECT COALESCE(json_extract(policy, '$.kind'), 'unknown') AS value, COUNT(*) AS count FROM episodes GROUP BY value ORDER BY count DESC, value`)
      .all() as { value: string; count: number }[];
    return { envNames, policies };
  }

  /** Steps without their state trees (the timeline), or with them. */
  steps(episodeId: number, withState = false): StepRecord[] {
    const cols = withState ? '*' : 'episode_id, idx, kind, action, raw_action, seed, observation, reward, terminated, truncated, info, error, NULL AS state, types, spade';
    const rows = this.db.prepare(`SELECT ${cols} FROM episode_steps WHERE episode_id = ? ORDER BY idx`).all(episodeId) as StepRow[];
    return rows.map(rowToRecord);
  }

  /** Views of steps from..to without reading the whole episode: the running return starts from SQL. */
  viewsRange(ep: Pick<EpisodeMeta, 'id' | 'hintEnabled' | 'hintText'>, from: number, to: number): StepView[] {
    const base = this.db
      .prepare(
        `SELECT COALESCE(SUM(reward), 0) AS cum FROM episode_steps WHERE episode_id = ? AND idx < ?
           AND idx >= COALESCE((SELECT MAX(idx) FROM episode_steps WHERE episode_id = ? AND kind = 'reset' AND idx < ?), 0)`,
      )
      .get(ep.id, from, ep.id, from) as { cum: number };
    const rows = this.db
      .prepare(
        `SELECT episode_id, idx, kind, action, raw_action, seed, observation, reward, terminated, truncated, info, error, NULL AS state, types, spade
         FROM episode_steps WHERE episode_id = ? AND idx BETWEEN ? AND ? ORDER BY idx`,
      )
      .all(ep.id, from, to) as StepRow[];
    const views = toViews(ep, rows.map(rowToRecord), from === 0);
    let cum = base.cum;
    for (const v of views) {
      if (v.kind === 'reset') cum = 0;
      cum += v.reward ?? 0;
      v.cumReturn = cum;
    }
    return views;
  }

  /** Episodes a regret run already recorded (by the runId kept in their meta): what a resume skips. */
  /** A run's episodes of one environment version (through the version's index: a sweep asks once per episode). */
  byRunAndEnv(runId: string, envHash: string): EpisodeMeta[] {
    const rows = this.db.prepare(`SELECT * FROM episodes WHERE env_hash = ? AND json_extract(meta, '$.run') = ? ORDER BY id`).all(envHash, runId) as EpisodeRow[];
    return rows.map(toMeta);
  }

  byRun(runId: string): EpisodeMeta[] {
    const rows = this.db.prepare(EPISODES_BY_RUN_SQL).all(runId) as EpisodeRow[];
    return rows.map(toMeta);
  }

  setMeta(episodeId: number, meta: Record<string, unknown>): void {
    const cur = this.meta(episodeId);
    this.db.prepare(`UPDATE episodes SET meta = ? WHERE id = ?`).run(JSON.stringify({ ...(cur?.meta ?? {}), ...meta }), episodeId);
  }

  step(episodeId: number, idx: number): StepRecord | null {
    const r = this.db.prepare(`SELECT * FROM episode_steps WHERE episode_id = ? AND idx = ?`).get(episodeId, idx) as StepRow | undefined;
    return r ? rowToRecord(r) : null;
  }

  /** The steps a fork starts from: a copy of steps 0..idx under a new episode id. */
  fork(episodeId: number, idx: number): number {
    const m = this.meta(episodeId);
    if (!m) throw new Error(`no episode ${episodeId}`);
    return this.db.transaction(() => {
      // A fork is made the way its parent was (mode, tool use, the reset it is compared with): a
      // re-execution in another mode would not reproduce the steps it shares with its parent.
      const made = Object.fromEntries(FORK_KEEPS.filter((k) => m.meta[k] !== undefined).map((k) => [k, m.meta[k]]));
      const id = this.create({ ...m, origin: m.origin === 'imported' ? 'played' : m.origin, parentId: episodeId, label: m.label, meta: { ...made, forkedAt: idx } });
      this.db
        .prepare(
          `INSERT INTO episode_steps (episode_id, idx, kind, action, raw_action, seed, observation, reward, terminated, truncated, info, error, state, types, spade)
           SELECT ?, idx, kind, action, raw_action, seed, observation, reward, terminated, truncated, info, error, state, types, spade FROM episode_steps WHERE episode_id = ? AND idx <= ?`,
        )
        .run(id, episodeId, idx);
      this.refreshTotals(id);
      return id;
    })();
  }

  delete(ids: number[]): number {
    const del = this.db.prepare(`DELETE FROM episodes WHERE id = ?`);
    let n = 0;
    this.db.transaction(() => {
      for (const id of ids) n += del.run(id).changes;
    })();
    return n;
  }
}
