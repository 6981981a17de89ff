/**
 * Counts beside a search (kinds, skills, tags, runs, validation, audits: how many of the matches
 * have each value, with the filter itself left out) and the library's totals.
 */
import type { MemoryFilters } from '../api';
import type { Db } from './db';
import { buildWhere, type Where } from './searchStore';
import { stmt } from './statements';

type Facet = { value: string; count: number }[];
function groupCount(db: Db, w: Where, expr: string, from = 'environments e', limit = 100): Facet {
  return stmt(
    db,
    `SELECT ${expr} AS value, count(*) AS count FROM ${from} ${w.sql ? `${w.sql} AND` : 'WHERE'} ${expr} IS NOT NULL GROUP BY value ORDER BY count DESC, value LIMIT ${limit}`,
  ).all(...w.params) as Facet;
}

export function facets(db: Db, query: string, f: MemoryFilters) {
  const count = (w: Where) => (stmt(db, `SELECT count(*) AS n FROM environments e ${w.sql}`).get(...w.params) as { n: number }).n;
  const seedW = buildWhere(query, { ...f, seed: true }, undefined);
  const rejW = buildWhere(query, { ...f, rejected: true }, undefined);
  return {
    kinds: groupCount(db, buildWhere(query, f, 'kind'), 'e.kind'),
    skills: groupCount(db, buildWhere(query, f, 'skills'), 'e.skill'),
    tags: groupCount(db, buildWhere(query, f, 'tags'), 't.tag', 'environments e JOIN tags t ON t.env_id = e.id', 50),
    runs: runFacet(db, buildWhere(query, f, 'run')),
    validation: groupCount(db, buildWhere(query, f, 'validation'), 'e.validation'),
    rejectionStages: groupCount(db, buildWhere(query, f, 'rejectionStage'), 'e.rejection_stage'),
    seeds: count(seedW),
    rejected: count(rejW),
    audit: auditFacet(db, buildWhere(query, f, 'audit')),
  };
}

/**
 * Runs by their name: a job's imports are filed under its id (unique, what the filter takes), and
 * the label is the name the person gave the job. Imports with `--run NAME` have no job: no label.
 */
function runFacet(db: Db, w: Where): (Facet[number] & { label: string | null })[] {
  return stmt(
    db,
    `SELECT e.source_run AS value, count(*) AS count, (SELECT j.name FROM jobs j WHERE j.id = e.source_run) AS label
     FROM environments e ${w.sql ? `${w.sql} AND` : 'WHERE'} e.source_run IS NOT NULL GROUP BY value ORDER BY count DESC, value LIMIT 50`,
  ).all(...w.params) as (Facet[number] & { label: string | null })[];
}

/** The stored audit of each head version: verdicts, and how many fail each check. */
function auditFacet(db: Db, w: Where): { verdicts: Facet; failing: Facet } {
  return {
    verdicts: groupCount(db, w, 'a.verdict', 'environments e JOIN audits a ON a.version_hash = e.head_hash'),
    failing: groupCount(db, w, 's.check_id', "environments e JOIN audit_check_status s ON s.version_hash = e.head_hash AND s.status = 'fail'"),
  };
}

export function libraryStats(db: Db) {
  const one = (sql: string) => (stmt(db, sql).get() as { n: number }).n;
  const pageCount = db.pragma('page_count', { simple: true }) as number;
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  return {
    environments: one('SELECT count(*) AS n FROM environments'),
    versions: one('SELECT count(*) AS n FROM versions'),
    hints: one('SELECT count(*) AS n FROM hints'),
    seeds: one('SELECT count(*) AS n FROM environments WHERE seed = 1'),
    rejected: one('SELECT count(*) AS n FROM environments WHERE rejected = 1'),
    flagged: one("SELECT count(*) AS n FROM environments WHERE flags != '[]'"),
    byKind: stmt(db, 'SELECT kind AS value, count(*) AS count FROM environments GROUP BY kind ORDER BY count DESC').all() as Facet,
    bySkill: stmt(db, "SELECT COALESCE(skill, '(none)') AS value, count(*) AS count FROM environments GROUP BY skill ORDER BY count DESC").all() as Facet,
    databaseBytes: pageCount * pageSize,
  };
}

export function environmentCount(db: Db): number {
  return (stmt(db, 'SELECT count(*) AS n FROM environments').get() as { n: number }).n;
}
