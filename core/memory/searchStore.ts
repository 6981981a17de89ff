/**
 * Searching the library: the query language and filters turned into one WHERE clause, ranked or
 * sorted pages of summaries, and every id a search or a selection matches.
 */
import type { EnvSummary, MemoryFilters, MemorySort } from '../api';
import type { Db } from './db';
import { measuredExpr, measuredSort, summaryCols, toSummary, type EnvRow } from './envRowStore';
import { parseQuery, type ParsedQuery } from './query';
import { stmt } from './statements';

/** User text -> its FTS5 MATCH expression (core/memory/query.ts: words, phrases, operators left out). */
export function ftsQuery(text: string): string | null {
  return parseQuery(text).match;
}

type FilterKey = keyof MemoryFilters;
export interface Where {
  sql: string;
  params: unknown[];
}

/**
 * The query's operators (tag:, skill:, seed, verdict:, run:, hash:) and its exact phrases as
 * conditions on `e` (core/memory/query.ts); the FTS match itself is the caller's, which may drive
 * from the FTS table instead.
 */
function queryConds(q: ParsedQuery, parts: string[], params: unknown[]): void {
  for (const t of q.tags) (parts.push('EXISTS (SELECT 1 FROM tags t WHERE t.env_id = e.id AND t.tag = ?)'), params.push(t));
  if (q.skills.length) (parts.push(`e.skill IN (${q.skills.map(() => '?').join(',')})`), params.push(...q.skills));
  if (q.seed) parts.push('e.seed = 1');
  if (q.rejected) parts.push('e.rejected = 1');
  for (const r of q.runs) (parts.push('(e.source_run = ? OR e.job_id = ? OR EXISTS (SELECT 1 FROM env_sources s WHERE s.env_id = e.id AND (s.run = ? OR s.job_id = ?)))'), params.push(r, r, r, r));
  for (const v of q.verdicts) {
    if (v.checkId) (parts.push('EXISTS (SELECT 1 FROM audit_check_status a WHERE a.version_hash = e.head_hash AND a.check_id = ? AND a.status = ?)'), params.push(v.checkId, v.status));
    else (parts.push('EXISTS (SELECT 1 FROM audits a WHERE a.version_hash = e.head_hash AND a.verdict = ?)'), params.push(v.status));
  }
  for (const h of q.hashes) {
    // A hex prefix needs no LIKE escaping; the range keeps it on the primary key's index.
    parts.push('(e.head_hash >= ? AND e.head_hash < ? OR EXISTS (SELECT 1 FROM versions v WHERE v.env_id = e.id AND v.hash >= ? AND v.hash < ?))');
    const hi = `${h}g`;
    params.push(h, hi, h, hi);
  }
  for (const x of q.exact) {
    // FTS5 drops punctuation, so the phrase found candidates; the text itself must be there too.
    parts.push(
      `(instr(lower(e.name), ?) > 0 OR instr(lower(e.notes), ?) > 0
        OR EXISTS (SELECT 1 FROM versions v WHERE v.hash = e.head_hash AND instr(lower(v.source), ?) > 0)
        OR EXISTS (SELECT 1 FROM hints h WHERE h.env_id = e.id AND h.id = (SELECT max(id) FROM hints WHERE env_id = e.id) AND instr(lower(h.text), ?) > 0))`,
    );
    const lx = x.toLowerCase();
    params.push(lx, lx, lx, lx);
  }
}

export function buildWhere(query: string | ParsedQuery, f: MemoryFilters, omit?: FilterKey, withFts = true): Where {
  const parts: string[] = [];
  const params: unknown[] = [];
  const q = typeof query === 'string' ? parseQuery(query) : query;
  const fts = withFts ? q.match : null;
  if (fts) {
    parts.push('e.id IN (SELECT rowid FROM env_fts WHERE env_fts MATCH ?)');
    params.push(fts);
  }
  queryConds(q, parts, params);
  const use = (k: FilterKey) => k !== omit && f[k] !== undefined;
  if (use('kind')) (parts.push('e.kind = ?'), params.push(f.kind));
  if (use('skills') && f.skills!.length) (parts.push(`e.skill IN (${f.skills!.map(() => '?').join(',')})`), params.push(...f.skills!));
  if (use('tags')) for (const t of f.tags!) (parts.push('EXISTS (SELECT 1 FROM tags t WHERE t.env_id = e.id AND t.tag = ?)'), params.push(t));
  if (use('seed')) (parts.push('e.seed = ?'), params.push(f.seed ? 1 : 0));
  if (use('rejected')) (parts.push('e.rejected = ?'), params.push(f.rejected ? 1 : 0));
  if (use('rejectionStage')) (parts.push('e.rejection_stage = ?'), params.push(f.rejectionStage));
  if (use('validation')) (parts.push('e.validation = ?'), params.push(f.validation));
  if (use('flagged')) parts.push(f.flagged ? "e.flags != '[]'" : "e.flags = '[]'");
  if (use('run')) (parts.push('(e.source_run = ? OR EXISTS (SELECT 1 FROM env_sources s WHERE s.env_id = e.id AND s.run = ?))'), params.push(f.run, f.run));
  if (use('jobId')) (parts.push('(e.job_id = ? OR EXISTS (SELECT 1 FROM env_sources s WHERE s.env_id = e.id AND s.job_id = ?))'), params.push(f.jobId, f.jobId));
  if (use('source')) {
    const prefix = f.source!.replace(/[\\%_]/g, (c) => `\\${c}`);
    parts.push("EXISTS (SELECT 1 FROM env_sources s WHERE s.env_id = e.id AND s.path LIKE ? ESCAPE '\\')");
    params.push(`${prefix}%`);
  }
  if (use('audit')) {
    const a = f.audit!;
    if (a.checkId) {
      parts.push('EXISTS (SELECT 1 FROM audit_check_status a WHERE a.version_hash = e.head_hash AND a.check_id = ? AND a.status = ?)');
      params.push(a.checkId, a.status);
    } else (parts.push('EXISTS (SELECT 1 FROM audits a WHERE a.version_hash = e.head_hash AND a.verdict = ?)'), params.push(a.status));
  }
  const ranges: [FilterKey, string][] = [
    ['winRate', 'e.win_rate'],
    ['regret', 'e.regret'],
    ['rHint', 'e.r_hint'],
    ['rNoHint', 'e.r_no_hint'],
    ['rating', 'e.rating'],
    ['rolloutStep', 'e.rollout_step'],
  ];
  // SPADE's frontier band for the chosen model's measured win rate (its designer samples 0.15-0.85).
  if (use('frontier')) parts.push(f.frontier ? `${measuredExpr('m.win_rate', f.measuredBy)} BETWEEN 0.15 AND 0.85` : `COALESCE(${measuredExpr('m.win_rate', f.measuredBy)} NOT BETWEEN 0.15 AND 0.85, 1)`);
  for (const [k, col] of ranges) {
    if (!use(k)) continue;
    const r = f[k] as { min?: number; max?: number };
    if (r.min !== undefined) (parts.push(`${col} >= ?`), params.push(r.min));
    if (r.max !== undefined) (parts.push(`${col} <= ?`), params.push(r.max));
  }
  return { sql: parts.length ? `WHERE ${parts.join(' AND ')}` : '', params };
}

const sortColumns: Record<Exclude<MemorySort['field'], 'relevance' | 'measuredRegret' | 'measuredWinRate' | 'model' | 'difficulty' | 'blend'>, string> = {
  name: 'e.name COLLATE NOCASE',
  skill: 'e.skill',
  kind: 'e.kind',
  updated: 'e.updated_at',
  created: 'e.id',
  regret: 'e.regret',
  winRate: 'e.win_rate',
  rHint: 'e.r_hint',
  rNoHint: 'e.r_no_hint',
  rating: 'e.rating',
  rolloutStep: 'e.rollout_step',
};

export interface SearchInput {
  query?: string;
  filters?: MemoryFilters;
  sort?: MemorySort;
  offset?: number;
  limit?: number;
}

/** Counting stops here: "10,000+ matches" says enough and keeps broad searches fast. */
export const COUNT_CAP = 10_000;
/** bm25 ranking costs per match; above this many, a query lists newest first instead. */
const RANK_LIMIT = 2_000;

export function search(db: Db, input: SearchInput): { total: number; capped: boolean; rows: EnvSummary[] } {
  const query = input.query ?? '';
  const filters = input.filters ?? {};
  const limit = input.limit ?? 100;
  const offset = input.offset ?? 0;
  const parsed = parseQuery(query);
  const fts = parsed.match;
  // A sort chosen outside the query (a column header, --sort) wins; else the query's `sort:`.
  const chosen = input.sort && input.sort.field !== 'relevance' ? input.sort : (parsed.sort ?? input.sort);
  if (!fts) {
    const where = buildWhere(parsed, filters);
    const field = chosen && chosen.field !== 'relevance' ? chosen.field : 'created';
    const dir = chosen && chosen.field !== 'relevance' && chosen.dir === 'asc' ? 'ASC' : 'DESC';
    const rows = stmt(db, `SELECT ${summaryCols(db, filters)} FROM environments e ${where.sql} ORDER BY ${sortExpr(field, filters)} ${dir} NULLS LAST, e.id ${dir} LIMIT ? OFFSET ?`).all(
      ...where.params,
      limit,
      offset,
    ) as EnvRow[];
    const total = (stmt(db, `SELECT count(*) AS n FROM environments e ${where.sql}`).get(...where.params) as { n: number }).n;
    return { total, capped: false, rows: rows.map(toSummary) };
  }
  // The FTS table drives: its doclist is already in rowid order, and the filters are checked per match.
  const rest = buildWhere(parsed, filters, undefined, false);
  const and = rest.sql ? `AND ${rest.sql.slice('WHERE '.length)}` : '';
  const n = (
    stmt(db, `SELECT count(*) AS n FROM (SELECT 1 FROM env_fts f JOIN environments e ON e.id = f.rowid WHERE env_fts MATCH ? ${and} LIMIT ${COUNT_CAP + 1})`).get(fts, ...rest.params) as {
      n: number;
    }
  ).n;
  const capped = n > COUNT_CAP;
  const total = Math.min(n, COUNT_CAP);
  const sort = chosen ?? { field: 'relevance' as const, dir: 'asc' as const };
  let rows: EnvRow[];
  if (sort.field === 'relevance' && n <= RANK_LIMIT) {
    rows = stmt(
      db,
      `SELECT ${summaryCols(db, filters)} FROM env_fts f JOIN environments e ON e.id = f.rowid WHERE env_fts MATCH ? ${and} ORDER BY f.rank ${sort.dir === 'desc' ? 'DESC' : 'ASC'}, e.id DESC LIMIT ? OFFSET ?`,
    ).all(fts, ...rest.params, limit, offset) as EnvRow[];
  } else if (sort.field === 'relevance' || sort.field === 'created') {
    const dir = sort.field === 'created' && sort.dir === 'asc' ? 'ASC' : 'DESC';
    rows = stmt(db, `SELECT ${summaryCols(db, filters)} FROM env_fts f JOIN environments e ON e.id = f.rowid WHERE env_fts MATCH ? ${and} ORDER BY f.rowid ${dir} LIMIT ? OFFSET ?`).all(
      fts,
      ...rest.params,
      limit,
      offset,
    ) as EnvRow[];
  } else {
    const where = buildWhere(parsed, filters);
    const dir = sort.dir === 'asc' ? 'ASC' : 'DESC';
    rows = stmt(db, `SELECT ${summaryCols(db, filters)} FROM environments e ${where.sql} ORDER BY ${sortExpr(sort.field as Exclude<MemorySort['field'], 'relevance'>, filters)} ${dir} NULLS LAST, e.id ${dir} LIMIT ? OFFSET ?`).all(
      ...where.params,
      limit,
      offset,
    ) as EnvRow[];
  }
  return { total, capped, rows: rows.map(toSummary) };
}

/** Every id a search matches (newest first), for bulk actions on "all matching"; at most `max`. */
export function matchingIds(db: Db, input: { query?: string; filters?: MemoryFilters }, max = 100_000): { ids: number[]; truncated: boolean } {
  const query = input.query ?? '';
  const where = buildWhere(query, input.filters ?? {});
  const ids = (stmt(db, `SELECT e.id FROM environments e ${where.sql} ORDER BY e.id DESC LIMIT ?`).all(...where.params, max + 1) as { id: number }[]).map((r) => r.id);
  return { ids: ids.slice(0, max), truncated: ids.length > max };
}

export interface Selection {
  ids?: number[];
  seeds?: boolean;
  tag?: string;
  query?: string;
  filters?: MemoryFilters;
}

/** Resolves an export/bulk selection to ids, in a stable order (oldest first). */
export function selectIds(db: Db, sel: Selection): number[] {
  if (sel.ids) return [...new Set(sel.ids)];
  const filters: MemoryFilters = { ...(sel.filters ?? {}) };
  if (sel.seeds) filters.seed = true;
  if (sel.tag) filters.tags = [...(filters.tags ?? []), sel.tag];
  const where = buildWhere(sel.query ?? '', filters);
  return (db.prepare(`SELECT e.id FROM environments e ${where.sql} ORDER BY e.id`).all(...where.params) as { id: number }[]).map((r) => r.id);
}

function sortExpr(field: Exclude<MemorySort['field'], 'relevance'>, f: MemoryFilters): string {
  return field in sortColumns ? sortColumns[field as keyof typeof sortColumns] : measuredSort(f)[field as keyof ReturnType<typeof measuredSort>];
}
