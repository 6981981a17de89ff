/**
 * Migrations 6 to 12, as they shipped: never edited (their checksums are stored in every database;
 * tests/unit/migrations.test.ts compares them). The list itself is core/memory/migrations.ts.
 */
import type { Migration } from '../migrations';

export const migrations6to12: Migration[] = [
  {
    version: 6,
    name: 'audits',
    // One audit per environment version (the latest replaces the previous one); statuses are
    // also kept per check so the pool dashboard counts failures with an index, not JSON parsing.
    // Batches remember their version list and options so a cancelled batch can resume.
    sql: `
      CREATE TABLE audits (
        version_hash TEXT PRIMARY KEY REFERENCES versions(hash) ON DELETE CASCADE,
        verdict TEXT NOT NULL CHECK (verdict IN ('pass', 'warn', 'fail')),
        spade_accepts INTEGER NOT NULL CHECK (spade_accepts IN (0, 1)),
        class_name TEXT,
        tool_use INTEGER NOT NULL DEFAULT 0,
        checks TEXT NOT NULL,
        options TEXT NOT NULL DEFAULT '{}',
        elapsed_ms REAL NOT NULL DEFAULT 0,
        batch_id TEXT,
        tool_version TEXT NOT NULL,
        created_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX audits_batch ON audits(batch_id);
      CREATE TABLE audit_check_status (
        version_hash TEXT NOT NULL REFERENCES audits(version_hash) ON DELETE CASCADE,
        check_id TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pass', 'warn', 'fail', 'skip')),
        PRIMARY KEY (version_hash, check_id)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX audit_check_status_by_check ON audit_check_status(check_id, status);
      CREATE TABLE audit_batches (
        id TEXT PRIMARY KEY,
        state TEXT NOT NULL CHECK (state IN ('running', 'cancelled', 'done', 'failed')),
        total INTEGER NOT NULL,
        done INTEGER NOT NULL DEFAULT 0,
        hashes TEXT NOT NULL,
        options TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 7,
    name: 'memory search prefix index',
    // Results-as-you-type searches end in a 2-3 letter prefix; without a prefix index FTS5 merges
    // every term that starts with it (16 ms at 100,000 environments), with it a single lookup.
    // Rebuilt from the stored rows (the table is contentless, so the text comes from versions/hints).
    sql: `
      DROP TABLE env_fts;
      CREATE VIRTUAL TABLE env_fts USING fts5(
        name, code, hint, notes,
        content = '', contentless_delete = 1,
        tokenize = "unicode61 remove_diacritics 2",
        prefix = '2 3'
      );
      INSERT INTO env_fts (rowid, name, code, hint, notes)
        SELECT e.id, e.name, v.source,
               COALESCE((SELECT h.text FROM hints h WHERE h.env_id = e.id ORDER BY h.id DESC LIMIT 1), ''), e.notes
        FROM environments e JOIN versions v ON v.hash = e.head_hash;
    `,
  },
  {
    version: 8,
    name: 'memory search names split again',
    // Migration 7 rebuilt the index from plain names, so an upgraded library stopped finding
    // `GridWalkEnv` by "walk" until each row was edited. 7 has shipped and cannot change; this redoes
    // its rows the way the app writes them.
    sql: `SELECT 1;`,
    step: 'splitSearchNames',
  },
  {
    version: 9,
    name: 'drop imports table',
    // Written by every import and read by nothing but its own stale-row check, which (per thread)
    // marked a concurrent worker's import "interrupted". Progress and summaries live in the service.
    sql: `DROP TABLE imports;`,
  },
  {
    version: 10,
    name: 'episode steps carry SPADE\'s converted step',
    // The wrapper's conversion (str/float/bool, errors as -1 terminal steps) decides SPADE's episode
    // end and return; it is kept beside the raw described values, JSON, null for resets and old rows.
    sql: `
      ALTER TABLE episode_steps ADD COLUMN spade TEXT;
    `,
  },
  {
    version: 11,
    name: 'what each job brought back',
    // The summary of every import a job's results triggered (flow-back), for the job view's
    // "what came back" line: new, updated, stats attached, records that matched no game.
    sql: `
      CREATE TABLE job_imports (
        id INTEGER PRIMARY KEY,
        job_id TEXT NOT NULL,
        summary TEXT NOT NULL,
        finished_at TEXT NOT NULL DEFAULT (datetime('now'))
      );
      CREATE INDEX job_imports_job ON job_imports(job_id);
    `,
  },
  {
    version: 12,
    name: 'model runs',
    // A model run is a record, not a transient result: its configuration, its status (a run that
    // was running when the app stopped is found so), one row per episode (a failed one with its
    // error and no return) and, per environment, what it measured. The per-environment rows carry
    // the model so the library finds "latest measurement of this version by this model" by index.
    sql: `
      CREATE TABLE model_runs (
        id TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        config TEXT NOT NULL,
        hint_source TEXT NOT NULL,
        seeds INTEGER NOT NULL,
        seed_start INTEGER NOT NULL,
        arms TEXT NOT NULL,
        max_turns INTEGER NOT NULL,
        runtime TEXT NOT NULL,
        selection TEXT,
        hashes TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'done', 'cancelled', 'failed')),
        error TEXT,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX model_runs_started ON model_runs(started_at);
      CREATE INDEX model_runs_model ON model_runs(model, started_at);
      CREATE TABLE model_run_episodes (
        run_id TEXT NOT NULL REFERENCES model_runs(id) ON DELETE CASCADE,
        env_hash TEXT NOT NULL,
        hint INTEGER NOT NULL CHECK (hint IN (0, 1)),
        seed INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
        ret REAL,
        ended_by TEXT NOT NULL,
        error TEXT,
        episode_id INTEGER REFERENCES episodes(id) ON DELETE SET NULL,
        recorded_at TEXT NOT NULL,
        PRIMARY KEY (run_id, env_hash, hint, seed),
        CHECK ((status = 'ok') = (ret IS NOT NULL))
      ) STRICT;
      CREATE TABLE model_run_envs (
        run_id TEXT NOT NULL REFERENCES model_runs(id) ON DELETE CASCADE,
        env_hash TEXT NOT NULL,
        env_name TEXT,
        model TEXT NOT NULL,
        r_hint REAL,
        r_no_hint REAL,
        regret REAL,
        win_rate REAL,
        hint_failed INTEGER NOT NULL DEFAULT 0,
        ok_hint INTEGER NOT NULL DEFAULT 0,
        ok_no_hint INTEGER NOT NULL DEFAULT 0,
        failed INTEGER NOT NULL DEFAULT 0,
        seeds TEXT NOT NULL DEFAULT '[]',
        updated_at TEXT NOT NULL,
        PRIMARY KEY (run_id, env_hash)
      ) STRICT;
      CREATE INDEX model_run_envs_env ON model_run_envs(env_hash, model, updated_at);
    `,
  },
];
