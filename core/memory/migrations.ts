/**
 * Numbered, append-only. A migration that has shipped is never edited: its checksum is stored
 * when applied and checked at every open, so an edited one is caught instead of silently skipped.
 * Later features append their own entries (environments, audits, episodes, jobs...).
 */
import type { Db } from './db';
import { searchableName } from './parse';
import { DomainError } from '../errors';

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /**
   * A step SQL cannot express, run after `sql` in the same transaction. It is named, not inlined:
   * the name joins the checksum, so a rebuilt (minified) bundle does not look like an edited migration.
   */
  step?: MigrationStep;
}

/**
 * The search index holds a name's CamelCase words too (`GridWalkEnv` is found by "walk"), the way
 * repository.refreshFts writes it; plain SQL cannot split them, so this rewrites every row whose
 * searchable name differs from the stored one.
 */
function splitSearchNames(db: Db): void {
  const names = db.prepare('SELECT id, name FROM environments').all() as { id: number; name: string }[];
  const row = db.prepare(
    `SELECT e.notes, v.source, COALESCE((SELECT h.text FROM hints h WHERE h.env_id = e.id ORDER BY h.id DESC LIMIT 1), '') AS hint
     FROM environments e JOIN versions v ON v.hash = e.head_hash WHERE e.id = ?`,
  );
  const del = db.prepare('DELETE FROM env_fts WHERE rowid = ?');
  const ins = db.prepare('INSERT INTO env_fts (rowid, name, code, hint, notes) VALUES (?, ?, ?, ?, ?)');
  for (const { id, name } of names) {
    const searchable = searchableName(name);
    if (searchable === name) continue;
    const r = row.get(id) as { notes: string; source: string; hint: string } | undefined;
    if (!r) continue;
    del.run(id);
    ins.run(id, searchable, r.source, r.hint, r.notes);
  }
}

function columns(db: Db, table: string): Set<string> {
  return new Set((db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name));
}

/** A column of the old table as the copy reads it: `present` (the column itself unless given), or `absent` where it was never added. */
function pick(cols: Set<string>, c: string, absent: string, present = c): string {
  return cols.has(c) ? present : absent;
}

/**
 * Migration 20's step: the rows of the sweep tables that the sweep store used to make on first use
 * (`audit_sweeps`, `audit_sweep_results`, with the columns `kind`, `owner` and `message` added to a
 * table made before them), carried into the tables the migration made, and the old tables dropped.
 * A database that never ran a sweep has no old tables: nothing to carry. A column added on first
 * use and absent here takes what the store read for it then: `kind` 'audit' (every sweep was an
 * audit before there was a kind), no owner, no message. Rows keep their order (rowid), which the
 * store's "newest first" breaks ties with.
 */
export function carrySweepTables(db: Db): void {
  const sweeps = columns(db, 'audit_sweeps');
  if (sweeps.size) {
    const missing = ['id', 'ident', 'target', 'query', 'options', 'items', 'state', 'created_at', 'updated_at'].filter((c) => !sweeps.has(c));
    // A table of that name made by something else: refused whole (the transaction rolls back), nothing dropped.
    if (missing.length) throw new DomainError('conflict', `The table audit_sweeps in this database is not the workbench's (no column ${missing.join(', ')}); it was left as it is`);
    db.exec(`INSERT INTO sweeps (id, kind, ident, target, query, options, items, state, remote, owner, message, created_at, updated_at)
      SELECT id, ${pick(sweeps, 'kind', "'audit'", "COALESCE(kind, 'audit')")}, ident, target, query, options, items, state,
        ${pick(sweeps, 'remote', "'[]'", "COALESCE(remote, '[]')")}, ${pick(sweeps, 'owner', 'NULL')}, ${pick(sweeps, 'message', 'NULL')}, created_at, updated_at
      FROM audit_sweeps ORDER BY rowid`);
  }
  const results = columns(db, 'audit_sweep_results');
  if (results.size) {
    const missing = ['sweep_id', 'item_key', 'audit', 'created_at'].filter((c) => !results.has(c));
    if (missing.length) throw new DomainError('conflict', `The table audit_sweep_results in this database is not the workbench's (no column ${missing.join(', ')}); it was left as it is`);
    // The old table's foreign key (ON DELETE CASCADE, foreign keys on) kept every result with its sweep.
    db.exec(`INSERT INTO sweep_results (sweep_id, item_key, result, node, created_at)
      SELECT sweep_id, item_key, audit, ${pick(results, 'node', 'NULL')}, created_at FROM audit_sweep_results ORDER BY rowid`);
  }
  db.exec('DROP TABLE IF EXISTS audit_sweep_results; DROP TABLE IF EXISTS audit_sweeps;');
}

export const migrationSteps = { splitSearchNames, carrySweepTables } as const;
export type MigrationStep = keyof typeof migrationSteps;

export const migrations: Migration[] = [
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
  {
    version: 13,
    name: 'design rounds',
    // A design round keeps everything a model wrote: every attempt's conversation, answer, program,
    // verdicts and the reason it was rejected, saved as it lands (a crash loses at most the attempt
    // in flight); a game row says whether one attempt was accepted, which environment it became and
    // its parents (the seeds it was shown).
    sql: `
      CREATE TABLE design_rounds (
        id TEXT PRIMARY KEY,
        seq INTEGER NOT NULL,
        config TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'done', 'cancelled', 'failed')),
        error TEXT,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE TABLE design_games (
        round_id TEXT NOT NULL REFERENCES design_rounds(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        skill TEXT NOT NULL,
        accepted INTEGER NOT NULL DEFAULT 0 CHECK (accepted IN (0, 1)),
        env_id INTEGER REFERENCES environments(id) ON DELETE SET NULL,
        env_hash TEXT,
        parents TEXT NOT NULL DEFAULT '[]',
        hint TEXT,
        hint_error TEXT,
        play TEXT,
        cls TEXT,
        difficulty_score REAL,
        PRIMARY KEY (round_id, idx)
      ) STRICT;
      CREATE TABLE design_attempts (
        round_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        n INTEGER NOT NULL,
        model TEXT NOT NULL,
        prompt TEXT NOT NULL,
        messages TEXT NOT NULL,
        answer TEXT NOT NULL,
        code TEXT NOT NULL,
        code_from TEXT NOT NULL,
        verdicts TEXT NOT NULL,
        rejected_because TEXT,
        seeds TEXT NOT NULL,
        prompt_tokens INTEGER,
        completion_tokens INTEGER,
        ms REAL NOT NULL,
        error TEXT,
        PRIMARY KEY (round_id, idx, n),
        FOREIGN KEY (round_id, idx) REFERENCES design_games(round_id, idx) ON DELETE CASCADE
      ) STRICT;
      CREATE INDEX design_games_env ON design_games(env_id);
    `,
  },
  {
    version: 14,
    name: 'hint check of designed games',
    // The hint is written after a designed program's audit, so its leak check is a second result
    // kept with the game ({status, message} as JSON; NULL when the game has no hint).
    sql: `ALTER TABLE design_games ADD COLUMN hint_leak TEXT;`,
  },
  {
    version: 15,
    name: 'episodes by run',
    // A model run finds its episodes by the run id kept in their meta (resume, the Runs page); the
    // index is on the same expression EpisodeStore queries, so that is a lookup, not a scan.
    sql: `CREATE INDEX episodes_run ON episodes(json_extract(meta, '$.run'));`,
  },
  {
    version: 16,
    name: 'metric axes and per-game returns of a job',
    // Each series has its own x axis (Slime logs rollout/step, train/step and eval/step; Tinker's
    // metrics.jsonl has step): kept per point, older points being rollout/step's. The games' two
    // returns and regret that only SPADE's log has ([REGRET] lines, spade/core/orchestrator.py:2051)
    // are kept per job, by the game's file name, to attach to the environments that job brought back.
    sql: `
      ALTER TABLE job_metrics ADD COLUMN axis TEXT NOT NULL DEFAULT 'rollout/step';
      CREATE TABLE job_games (
        job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
        game TEXT NOT NULL,
        r_hint REAL,
        r_no_hint REAL,
        regret REAL,
        PRIMARY KEY (job_id, game)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 17,
    name: 'design round owner',
    // The process running a round (host, pid, start time as JSON; core/audit/dispatch/sweepOwner.ts),
    // as sweeps keep theirs: the app and the CLI may share one memory file, and a round another live
    // process runs is not one a stopped workbench left behind. NULL once the round ends.
    sql: `ALTER TABLE design_rounds ADD COLUMN owner TEXT;`,
  },
  {
    version: 18,
    name: 'GPU use of a job',
    // What nvidia-smi (or Ray's node stats) said about a job's GPUs while it ran, kept with the job
    // (core/jobs/gpu/): one row per GPU per sample; the last processes seen on each GPU; and per node
    // whether a GPU was seen at all (node '' is the sampler's own state: sampling, dropped, ended).
    sql: `
      CREATE TABLE job_gpu_samples (
        job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
        node TEXT NOT NULL,
        gpu INTEGER NOT NULL,
        t REAL NOT NULL,
        uuid TEXT,
        name TEXT,
        util REAL,
        mem_used REAL,
        mem_total REAL,
        power REAL,
        temp REAL
      ) STRICT;
      CREATE INDEX job_gpu_samples_job ON job_gpu_samples(job_id, node, gpu, t);
      CREATE TABLE job_gpu_procs (
        job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
        node TEXT NOT NULL,
        t REAL NOT NULL,
        gpu_uuid TEXT NOT NULL,
        pid INTEGER,
        process_name TEXT,
        used_memory REAL
      ) STRICT;
      CREATE INDEX job_gpu_procs_job ON job_gpu_procs(job_id, node);
      CREATE TABLE job_gpu_nodes (
        job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
        node TEXT NOT NULL,
        state TEXT NOT NULL,
        detail TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (job_id, node)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 19,
    name: 'regret estimator',
    // Every stored regret says which estimator made it: SPADE's (hinted plays seeded from the game's
    // path, unhinted ones unseeded, a failed hinted play counted 0.0; core/episodes/estimator.ts) or
    // the workbench's paired seeds, which is what every run stored before this migration measured.
    // An unseeded episode row keeps its place among the run's unseeded plays in `seed`.
    sql: `
      ALTER TABLE model_runs ADD COLUMN estimator TEXT NOT NULL DEFAULT 'paired' CHECK (estimator IN ('spade', 'paired'));
      ALTER TABLE model_run_envs ADD COLUMN estimator TEXT NOT NULL DEFAULT 'paired' CHECK (estimator IN ('spade', 'paired'));
      ALTER TABLE model_run_episodes ADD COLUMN unseeded INTEGER NOT NULL DEFAULT 0 CHECK (unseeded IN (0, 1));
    `,
  },
  {
    version: 20,
    name: 'sweeps',
    // Every kind of sweep (pool audits, regret sweeps; core/sweeps/) and the results that arrived,
    // made here instead of by the sweep store on first use. The step carries over the rows of the
    // tables the store used to make (audit_sweeps, audit_sweep_results, and the columns it added to
    // them later) and drops those (carrySweepTables, above).
    sql: `
      CREATE TABLE sweeps (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        ident TEXT NOT NULL,
        target TEXT NOT NULL,
        query TEXT NOT NULL,
        options TEXT NOT NULL,
        items TEXT NOT NULL,
        state TEXT NOT NULL,
        remote TEXT NOT NULL DEFAULT '[]',
        owner TEXT,
        message TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX sweeps_ident ON sweeps(ident, created_at);
      CREATE INDEX sweeps_kind ON sweeps(kind, created_at);
      CREATE TABLE sweep_results (
        sweep_id TEXT NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
        item_key TEXT NOT NULL,
        result TEXT NOT NULL,
        node TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (sweep_id, item_key)
      ) STRICT;
    `,
    step: 'carrySweepTables',
  },
];
