/**
 * Migrations 1 to 5, as they shipped: never edited (their checksums are stored in every database;
 * tests/unit/migrations.test.ts compares them). The list itself is core/memory/migrations.ts.
 */
import type { Migration } from '../migrations';

export const migrations1to5: Migration[] = [
  {
    version: 1,
    name: 'settings',
    sql: `
      CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 2,
    name: 'memory',
    // Environments are identified by their versions' content hashes; an environment row carries
    // what the researcher and SPADE say about it (stats, flags, notes), versions carry the code.
    // Stats live as columns (not JSON) so range filters use plain indexes at 100,000 rows.
    sql: `
      CREATE TABLE environments (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('game', 'tool-use')),
        skill TEXT,
        head_hash TEXT NOT NULL,
        file_stem TEXT,
        seed INTEGER NOT NULL DEFAULT 0 CHECK (seed IN (0, 1)),
        rating INTEGER CHECK (rating BETWEEN 0 AND 5),
        notes TEXT NOT NULL DEFAULT '',
        rejected INTEGER NOT NULL DEFAULT 0 CHECK (rejected IN (0, 1)),
        rejection_stage TEXT,
        rejection_reason TEXT,
        validation TEXT,
        flags TEXT NOT NULL DEFAULT '[]',
        source_path TEXT,
        source_run TEXT,
        rollout_step INTEGER,
        job_id TEXT,
        win_rate REAL,
        regret REAL,
        r_hint REAL,
        r_no_hint REAL,
        meta TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX environments_name ON environments(name COLLATE NOCASE);
      CREATE INDEX environments_skill ON environments(skill);
      CREATE INDEX environments_kind ON environments(kind);
      CREATE INDEX environments_updated ON environments(updated_at);
      CREATE INDEX environments_stem ON environments(file_stem);
      CREATE INDEX environments_run ON environments(source_run);
      CREATE INDEX environments_seed ON environments(seed) WHERE seed = 1;
      CREATE INDEX environments_regret ON environments(regret);
      CREATE INDEX environments_win_rate ON environments(win_rate);

      CREATE TABLE versions (
        hash TEXT PRIMARY KEY,
        env_id INTEGER NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
        parent_hash TEXT REFERENCES versions(hash),
        source TEXT NOT NULL,
        class_name TEXT,
        bytes INTEGER NOT NULL,
        message TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX versions_env ON versions(env_id, created_at);

      CREATE TABLE hints (
        id INTEGER PRIMARY KEY,
        env_id INTEGER NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
        version_hash TEXT,
        text TEXT NOT NULL,
        origin TEXT NOT NULL DEFAULT 'import',
        created_at TEXT NOT NULL,
        UNIQUE (env_id, text)
      ) STRICT;

      CREATE TABLE tags (
        env_id INTEGER NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
        tag TEXT NOT NULL,
        PRIMARY KEY (env_id, tag)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX tags_tag ON tags(tag, env_id);

      -- Every place an environment was seen (a folder, a run, a job): one environment, many sightings.
      CREATE TABLE env_sources (
        env_id INTEGER NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        run TEXT,
        rollout_step INTEGER,
        job_id TEXT,
        seen_at TEXT NOT NULL,
        PRIMARY KEY (env_id, path)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX env_sources_run ON env_sources(run);

      CREATE TABLE imports (
        id INTEGER PRIMARY KEY,
        job_id TEXT,
        paths TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        state TEXT NOT NULL DEFAULT 'running',
        summary TEXT
      ) STRICT;

      -- Unsaved editor buffers per environment (the editor feature owns the contents).
      CREATE TABLE drafts (
        env_id INTEGER NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
        base_hash TEXT,
        source TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (env_id)
      ) STRICT;

      -- Contentless: the text already lives in versions/hints; the index keeps only postings.
      CREATE VIRTUAL TABLE env_fts USING fts5(
        name, code, hint, notes,
        content = '', contentless_delete = 1,
        tokenize = "unicode61 remove_diacritics 2"
      );
    `,
  },
  {
    version: 3,
    name: 'jobs',
    // Jobs survive restarts: the app re-attaches to every job that was not finished. Log offsets
    // are bytes of the remote log already mirrored locally, so a resumed tail has no gap and no
    // duplicate. Secrets are never stored here: only the names of the variables they fill.
    sql: `
      CREATE TABLE jobs (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        backend TEXT NOT NULL CHECK (backend IN ('local', 'ssh', 'slurm', 'ray')),
        host TEXT,
        recipe TEXT,
        spec TEXT NOT NULL,
        external_id TEXT,
        state TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT '',
        exit_code INTEGER,
        remote_log TEXT,
        log_offset INTEGER NOT NULL DEFAULT 0,
        local_log_size INTEGER NOT NULL DEFAULT 0,
        metrics_offset INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        started_at TEXT,
        finished_at TEXT,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX jobs_state ON jobs(state, created_at);
      CREATE TABLE job_metrics (
        job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
        step REAL NOT NULL,
        key TEXT NOT NULL,
        value REAL NOT NULL,
        PRIMARY KEY (job_id, key, step)
      ) STRICT, WITHOUT ROWID;
      CREATE TABLE job_files (
        job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime REAL NOT NULL,
        rollout_step INTEGER,
        imported_at TEXT NOT NULL,
        result TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (job_id, path)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 4,
    name: 'editor_hint_drafts',
    // The editor keeps the hint side of a tab as a draft too; NULL means the hint was not touched.
    sql: `
      ALTER TABLE drafts ADD COLUMN hint TEXT;
    `,
  },
  {
    version: 5,
    name: 'episodes',
    // An episode is self-sufficient for replay: the version hash (not the environment id, which a
    // merge could change), seed, hint, budget and runtime, then every step with what came back and
    // the state tree. Not a foreign key to versions: imported trajectories and CLI replays may name
    // a version this library has never seen, and the recording must still be kept.
    sql: `
      CREATE TABLE episodes (
        id INTEGER PRIMARY KEY,
        env_hash TEXT NOT NULL,
        env_name TEXT,
        class_name TEXT,
        seed INTEGER,
        hint_enabled INTEGER NOT NULL DEFAULT 0 CHECK (hint_enabled IN (0, 1)),
        hint_text TEXT,
        max_turns INTEGER NOT NULL,
        runtime TEXT NOT NULL,
        policy TEXT NOT NULL DEFAULT '{}',
        origin TEXT NOT NULL CHECK (origin IN ('played', 'imported', 'replay', 'regret')),
        label TEXT NOT NULL DEFAULT '',
        parent_id INTEGER REFERENCES episodes(id) ON DELETE SET NULL,
        pair_id INTEGER,
        step_count INTEGER NOT NULL DEFAULT 0,
        total_return REAL NOT NULL DEFAULT 0,
        terminated INTEGER NOT NULL DEFAULT 0,
        truncated INTEGER NOT NULL DEFAULT 0,
        divergence_step INTEGER,
        meta TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX episodes_env ON episodes(env_hash, created_at);
      CREATE INDEX episodes_updated ON episodes(updated_at);

      -- idx 0 is the reset; a later 'reset' step is a re-reset of the same instance (how state
      -- leaking across reset shows up). state is the harness's JSON state tree after the step.
      CREATE TABLE episode_steps (
        episode_id INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('reset', 'step')),
        action TEXT,
        raw_action TEXT,
        seed INTEGER,
        observation TEXT,
        reward REAL,
        terminated INTEGER NOT NULL DEFAULT 0,
        truncated INTEGER NOT NULL DEFAULT 0,
        info TEXT NOT NULL DEFAULT '{}',
        error TEXT,
        state TEXT,
        types TEXT,
        PRIMARY KEY (episode_id, idx)
      ) STRICT, WITHOUT ROWID;
    `,
  },
];
