/**
 * Numbered, append-only. A migration that has shipped is never edited: its checksum is stored
 * when applied and checked at every open, so an edited one is caught instead of silently skipped.
 * Later features append their own entries (environments, audits, episodes, jobs...) at the end of
 * the list below. Older ranges live in core/memory/migrations/ only to keep this file short: the
 * list is the same list, same order, same text (tests/unit/migrations.test.ts checks the checksums);
 * when this file nears 500 lines, move its oldest entries into a new range file there.
 */
import type { Db } from './db';
import { searchableName } from './parse';
import { DomainError } from '../errors';
import { migrations1to5 } from './migrations/1to5';
import { migrations6to12 } from './migrations/6to12';

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
  ...migrations1to5,
  ...migrations6to12,
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
  {
    version: 21,
    name: 'wire audits',
    // The workbench's own checks of an OpenEnv server over the wire (core/openenv/wireAudit.ts: the
    // wire.* ids, not SPADE's audit), kept per URL: the app's "Audit over the wire" and the CLI's
    // openenv-audit. The URL is stored without its ?token= (core/openenv/wireAuditStore.ts).
    sql: `
      CREATE TABLE wire_audits (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        url TEXT NOT NULL,
        server_name TEXT,
        server_version TEXT,
        verdict TEXT NOT NULL CHECK (verdict IN ('pass', 'warn', 'fail')),
        checks TEXT NOT NULL,
        elapsed_ms REAL NOT NULL,
        source TEXT NOT NULL CHECK (source IN ('app', 'cli')),
        created_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX wire_audits_url ON wire_audits(url, created_at);
    `,
  },
];
