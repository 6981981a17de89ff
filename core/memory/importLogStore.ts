import type { Db } from './db';
import type { ImportSummary } from '../api/calls/memory';
import { stmt } from './statements';

export interface JobImports {
  imports: number;
  imported: number;
  updated: number;
  unchanged: number;
  statsAttached: number;
  skipped: number;
  /** env_memory.json records naming a game the library does not hold. */
  recordsUnmatched: number;
  examples: { path: string; reason: string }[];
}

/** What came back from a job into the library, over every import its results triggered. */
export function importsOfJob(db: Db, jobId: string, examples = 20): JobImports {
  const rows = stmt(db, 'SELECT summary FROM job_imports WHERE job_id = ? ORDER BY id').all(jobId) as { summary: string }[];
  const out: JobImports = { imports: rows.length, imported: 0, updated: 0, unchanged: 0, statsAttached: 0, skipped: 0, recordsUnmatched: 0, examples: [] };
  for (const r of rows) {
    let s: ImportSummary;
    try {
      s = JSON.parse(r.summary) as ImportSummary;
    } catch {
      continue;
    }
    out.imported += s.imported;
    out.updated += s.updated;
    out.unchanged += s.unchanged;
    out.statsAttached += s.statsAttached;
    // The summary keeps counts per reason and the first examples (a huge import stays small).
    out.skipped += s.skippedTotal ?? s.skipped.length;
    for (const [reason, n] of Object.entries(s.skippedByReason ?? {})) if (/not in the library/.test(reason)) out.recordsUnmatched += n;
    for (const k of s.skipped) if (out.examples.length < examples) out.examples.push(k);
  }
  return out;
}

/** Keeps the summary of an import a job's results triggered. */
export function recordJobImport(db: Db, jobId: string, summary: ImportSummary): void {
  stmt(db, 'INSERT INTO job_imports (job_id, summary) VALUES (?, ?)').run(jobId, JSON.stringify(summary));
}
