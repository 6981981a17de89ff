/**
 * A row of `environments` as the library shows it: the columns every listing selects (tags, and
 * what a model run measured for the head version), and the row read into an EnvSummary or a
 * version into a VersionInfo. Shared by reading one environment (repository.ts) and searching
 * (searchStore.ts).
 */
import type { EnvSummary, MemoryFilters, VersionInfo } from '../api';
import { blendParts } from '../api/blendParts';
import type { Db } from './db';
import { blendSql, hasEstimator } from './blendSql';
import { stmt } from './statements';

export interface EnvRow {
  id: number;
  name: string;
  kind: 'game' | 'tool-use';
  skill: string | null;
  head_hash: string;
  file_stem: string | null;
  seed: number;
  rating: number | null;
  notes: string;
  rejected: number;
  rejection_stage: string | null;
  rejection_reason: string | null;
  validation: string | null;
  flags: string;
  source_path: string | null;
  source_run: string | null;
  rollout_step: number | null;
  job_id: string | null;
  win_rate: number | null;
  regret: number | null;
  r_hint: number | null;
  r_no_hint: number | null;
  meta: string;
  created_at: string;
  updated_at: string;
  tag_list?: string | null;
  measured_json?: string | null;
}

const TAG_SEP = '\u001f';
export const SUMMARY_COLS = `e.*, (SELECT group_concat(tag, char(31)) FROM tags t WHERE t.env_id = e.id) AS tag_list`;

/** A string as an SQL literal (quotes doubled): the chosen model joins the statement text, so the
 * statement cache holds one statement per model named, and positional parameters keep their order. */
const sqlText = (s: string) => `'${s.replace(/'/g, "''")}'`;

/**
 * What a model run measured for the head version (migration 12): the newest measurement with a
 * known win rate, by the chosen model (filters.measuredBy) or, with none chosen, by any model.
 * Measured numbers are kept apart from the imported e.win_rate / e.regret a training run recorded.
 */
export function measuredExpr(col: string, model: string | undefined): string {
  return `(SELECT ${col} FROM model_run_envs m WHERE m.env_hash = e.head_hash${model ? ` AND m.model = ${sqlText(model)}` : ''} AND m.win_rate IS NOT NULL ORDER BY m.updated_at DESC LIMIT 1)`;
}
// The estimator's label rides along where the regret's store keeps one (hasEstimator).
const measuredJson = (db: Db) =>
  `json_object('model', m.model, 'runId', m.run_id, 'regret', m.regret, 'winRate', m.win_rate, 'rHint', m.r_hint, 'rNoHint', m.r_no_hint, 'seeds', json_array_length(m.seeds), 'failed', m.failed, 'updatedAt', m.updated_at${hasEstimator(db) ? ", 'estimator', m.estimator" : ''})`;
/**
 * The measured column costs one subquery per row (most of memory.search's CPU on a small library);
 * while no model run has measured a win rate it is null for every row, so it is left out. Asked on
 * every search, never remembered: the first measurement shows in the next search.
 */
export function summaryCols(db: Db, f: MemoryFilters): string {
  const any = (stmt(db, 'SELECT EXISTS (SELECT 1 FROM model_run_envs WHERE win_rate IS NOT NULL) AS y').get() as { y: number }).y;
  return `${SUMMARY_COLS}, ${any ? measuredExpr(measuredJson(db), f.measuredBy) : 'NULL'} AS measured_json`;
}
export const measuredSort = (f: MemoryFilters): Record<'measuredRegret' | 'measuredWinRate' | 'model' | 'difficulty' | 'blend', string> => ({
  measuredRegret: measuredExpr('m.regret', f.measuredBy),
  measuredWinRate: measuredExpr('m.win_rate', f.measuredBy),
  model: measuredExpr('m.model', f.measuredBy),
  difficulty: measuredExpr('1 - abs(m.win_rate - 0.5) / 0.5', f.measuredBy),
  // SPADE's designer blend of the same measurement the Blend column shows (blendSql.ts).
  blend: measuredExpr(blendSql('m.r_no_hint', 'm.regret'), f.measuredBy),
});
function measuredOf(json: string | null | undefined): EnvSummary['measured'] {
  if (!json) return null;
  // `estimator` is there where model_run_envs keeps one (hasEstimator): the blend names it too.
  const m = JSON.parse(json) as Omit<NonNullable<EnvSummary['measured']>, 'difficulty' | 'frontier' | 'blend'> & { estimator?: unknown };
  const p = m.winRate;
  // The blend's plateau reads the mean unhinted reward (SPADE's win_rate), not this share of wins.
  return { ...m, difficulty: p === null ? null : 1 - Math.abs(p - 0.5) / 0.5, frontier: p !== null && p >= 0.15 && p <= 0.85, blend: blendParts(m.rNoHint, m.regret, m.estimator ?? null) };
}

export function toSummary(r: EnvRow): EnvSummary {
  return {
    id: r.id,
    name: r.name,
    kind: r.kind,
    skill: r.skill,
    hash: r.head_hash,
    seed: r.seed === 1,
    rating: r.rating,
    rejected: r.rejected === 1,
    rejectionStage: r.rejection_stage,
    validation: r.validation,
    flags: JSON.parse(r.flags) as string[],
    sourceRun: r.source_run,
    rolloutStep: r.rollout_step,
    winRate: r.win_rate,
    regret: r.regret,
    rHint: r.r_hint,
    rNoHint: r.r_no_hint,
    tags: r.tag_list ? r.tag_list.split(TAG_SEP).sort() : [],
    updatedAt: r.updated_at,
    measured: measuredOf(r.measured_json),
  };
}

export interface VersionRow {
  hash: string;
  env_id: number;
  parent_hash: string | null;
  class_name: string | null;
  bytes: number;
  message: string;
  created_at: string;
  source?: string;
}
export function toVersion(v: VersionRow): VersionInfo {
  return { hash: v.hash, envId: v.env_id, parentHash: v.parent_hash, className: v.class_name, bytes: v.bytes, message: v.message, createdAt: v.created_at };
}
