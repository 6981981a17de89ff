/**
 * Design rounds in SQLite (migration "design rounds"): the round, each game, each attempt as it
 * lands. `roundView` reads one back in the shape the CLI prints and the UI shows.
 */
import type { Db } from '../memory/db';
import type { AttemptRecord, GameRecord } from './attempt';
import type { AcceptanceVerdict } from './acceptance';
import { SNIPPET_CHARS, type MemoryRecord } from './seeds';
import type { GroundingDoc } from './promptSource';
import { describeOwner, isThisProcess, ownerAlive, thisProcess, type SweepOwner } from '../sweeps/sweepOwner';
import { designBlend, type DesignBlend } from './blend';

export type RoundStatus = 'running' | 'done' | 'cancelled' | 'failed';

export function createRound(db: Db, id: string, config: Record<string, unknown>): number {
  const now = new Date().toISOString();
  const seq = ((db.prepare('SELECT COALESCE(MAX(seq), 0) AS s FROM design_rounds').get() as { s: number }).s ?? 0) + 1;
  // The owner is written with the round: from its first row on, another process sees who runs it.
  db.prepare("INSERT INTO design_rounds (id, seq, config, status, started_at, updated_at, owner) VALUES (?, ?, ?, 'running', ?, ?, ?)").run(id, seq, JSON.stringify(config), now, now, JSON.stringify(thisProcess()));
  return seq;
}

export function startGame(db: Db, roundId: string, idx: number, skill: string): void {
  db.prepare('INSERT INTO design_games (round_id, idx, skill) VALUES (?, ?, ?)').run(roundId, idx, skill);
}

/**
 * What an attempt's prompt was built from rides in its `seeds` column (no schema change): the seeds'
 * ids, and since issue 44 the corpus document it was grounded on and what built its body.
 */
export function saveAttempt(db: Db, roundId: string, idx: number, model: string, a: AttemptRecord): void {
  const built = { ...a.seeds, ...(a.document ? { document: a.document } : {}), builder: a.builder };
  db.prepare(
    `INSERT INTO design_attempts (round_id, idx, n, model, prompt, messages, answer, code, code_from, verdicts, rejected_because, seeds, prompt_tokens, completion_tokens, ms, error)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(roundId, idx, a.n, model, a.prompt, JSON.stringify(a.messages), a.answer, a.code, a.codeFrom, verdictsJson(a), a.rejectedBecause, JSON.stringify(built), a.tokens.prompt, a.tokens.completion, a.ms, a.error);
}

/**
 * The `verdicts` column: the audit's checks, and since issue 44 the acceptance verdict with them as
 * `{checks, acceptance}` (no schema change: an attempt's record stays one row). Older rows hold the
 * bare list; readVerdicts takes either.
 */
function verdictsJson(a: AttemptRecord): string {
  return JSON.stringify(a.acceptance ? { checks: a.verdicts, acceptance: a.acceptance } : a.verdicts);
}

type StoredCheck = { id: string; status: string; message: string };
export function readVerdicts(json: string): { checks: StoredCheck[]; acceptance: AcceptanceVerdict | null } {
  const v = JSON.parse(json) as StoredCheck[] | { checks: StoredCheck[]; acceptance: AcceptanceVerdict | null };
  return Array.isArray(v) ? { checks: v, acceptance: null } : { checks: v.checks, acceptance: v.acceptance ?? null };
}

export function finishGame(db: Db, roundId: string, idx: number, g: GameRecord, env: { id: number; hash: string } | null): void {
  db.prepare('UPDATE design_games SET accepted = ?, env_id = ?, env_hash = ?, parents = ?, hint = ?, hint_error = ?, hint_leak = ?, play = ?, cls = ?, difficulty_score = ? WHERE round_id = ? AND idx = ?').run(
    g.accepted ? 1 : 0,
    env?.id ?? null,
    env?.hash ?? null,
    JSON.stringify(g.parents),
    g.hint,
    g.hintError,
    g.hintLeak ? JSON.stringify(g.hintLeak) : null,
    g.play ? JSON.stringify(g.play) : g.playError ? JSON.stringify({ error: g.playError }) : null,
    g.cls,
    g.difficultyScore,
    roundId,
    idx,
  );
}

export function finishRound(db: Db, id: string, status: RoundStatus, error: string | null = null): void {
  const now = new Date().toISOString();
  db.prepare('UPDATE design_rounds SET status = ?, error = ?, ended_at = ?, updated_at = ?, owner = NULL WHERE id = ?').run(status, error, now, now, id);
}

function ownerOf(json: string | null): SweepOwner | null {
  if (!json) return null;
  try {
    return JSON.parse(json) as SweepOwner;
  } catch {
    return null;
  }
}

/** Another live process running this round (the CLI on the same memory file), or null. */
function runningElsewhere(status: RoundStatus, owner: string | null): SweepOwner | null {
  const o = status === 'running' ? ownerOf(owner) : null;
  return o && !isThisProcess(o) && ownerAlive(o) ? o : null;
}

/**
 * A round that was running when the process that ran it stopped is not running any more: say so.
 * A round another live process runs (`spade-workbench design` on this data folder) is left to it:
 * that process stores its attempts and ends it. Rounds from before owners were kept have none.
 */
export function markInterrupted(db: Db): number {
  const now = new Date().toISOString();
  const running = db.prepare("SELECT id, owner FROM design_rounds WHERE status = 'running'").all() as { id: string; owner: string | null }[];
  const mark = db.prepare("UPDATE design_rounds SET status = 'failed', error = 'the workbench stopped during the round', ended_at = ?, updated_at = ?, owner = NULL WHERE id = ? AND status = 'running'");
  let n = 0;
  for (const r of running) {
    const o = ownerOf(r.owner);
    if (o && (isThisProcess(o) || ownerAlive(o))) continue;
    n += mark.run(now, now, r.id).changes;
  }
  return n;
}

export interface RoundRow {
  id: string;
  seq: number;
  status: RoundStatus;
  error: string | null;
  config: Record<string, unknown>;
  startedAt: string;
  endedAt: string | null;
  games: number;
  accepted: number;
  attempts: number;
  /** The other live process running it ("process 1234"), or null. */
  elsewhere: string | null;
}

/** Rounds newest first, with how many games were designed and accepted (for a list, not the whole round). */
export function listRounds(db: Db, limit = 100): RoundRow[] {
  const rows = db
    .prepare(
      `SELECT r.*, (SELECT count(*) FROM design_games g WHERE g.round_id = r.id) AS games,
              (SELECT count(*) FROM design_games g WHERE g.round_id = r.id AND g.accepted = 1) AS accepted,
              (SELECT count(*) FROM design_attempts a WHERE a.round_id = r.id) AS attempts
       FROM design_rounds r ORDER BY r.seq DESC LIMIT ?`,
    )
    .all(limit) as { id: string; seq: number; status: RoundStatus; error: string | null; config: string; started_at: string; ended_at: string | null; games: number; accepted: number; attempts: number; owner: string | null }[];
  return rows.map((r) => {
    const o = runningElsewhere(r.status, r.owner);
    return { id: r.id, seq: r.seq, status: r.status, error: r.error, config: JSON.parse(r.config) as Record<string, unknown>, startedAt: r.started_at, endedAt: r.ended_at, games: r.games, accepted: r.accepted, attempts: r.attempts, elsewhere: o ? describeOwner(o) : null };
  });
}

/** The round's number (SPADE's rollout step for its games), or null for an unknown id. */
export function roundSeq(db: Db, id: string): number | null {
  return (db.prepare('SELECT seq FROM design_rounds WHERE id = ?').get(id) as { seq: number } | undefined)?.seq ?? null;
}

export interface RoundView {
  id: string;
  seq: number;
  status: RoundStatus;
  error: string | null;
  config: Record<string, unknown>;
  startedAt: string;
  endedAt: string | null;
  /** The other live process running it ("process 1234"), or null. */
  elsewhere: string | null;
  games: {
    idx: number;
    skill: string;
    accepted: boolean;
    env_id: number | null;
    env_hash: string | null;
    parents: number[];
    hint: string | null;
    hint_error: string | null;
    hint_leak: { status: string; message: string } | null;
    play_error: string | null;
    /** Where the game's episodes were played (`local`, `ray://…`, `slurm:…`); null when it was not played. */
    plays_on: string | null;
    regret: number | null;
    /** Which estimator made `regret` (core/episodes/estimator.ts); null when not played. */
    regret_estimator: 'spade' | 'paired' | null;
    win_rate: number | null;
    r_hint: number | null;
    r_no_hint: number | null;
    /** SPADE's designer reward of the game from r_no_hint and regret (null: not accepted or not measured). */
    spade_blend: DesignBlend | null;
    class: string | null;
    difficulty_score: number | null;
    attempts: { n: number; model: string; prompt: string; answer: string; code: string; verdicts: { id: string; status: string; message: string }[]; rejected_because: string | null; acceptance: AcceptanceVerdict | null; seeds: unknown; document: GroundingDoc | null; builder: string | null; system: string | null; tokens: { prompt: number | null; completion: number | null }; ms: number; error: string | null }[];
  }[];
}

export function roundView(db: Db, id: string): RoundView | null {
  const r = db.prepare('SELECT * FROM design_rounds WHERE id = ?').get(id) as
    | { id: string; seq: number; config: string; status: RoundStatus; error: string | null; started_at: string; ended_at: string | null; owner: string | null }
    | undefined;
  if (!r) return null;
  const games = db.prepare('SELECT * FROM design_games WHERE round_id = ? ORDER BY idx').all(id) as {
    idx: number;
    skill: string;
    accepted: number;
    env_id: number | null;
    env_hash: string | null;
    parents: string;
    hint: string | null;
    hint_error: string | null;
    hint_leak: string | null;
    play: string | null;
    cls: string | null;
    difficulty_score: number | null;
  }[];
  const attempts = db.prepare('SELECT * FROM design_attempts WHERE round_id = ? AND idx = ? ORDER BY n');
  return {
    id: r.id,
    seq: r.seq,
    status: r.status,
    error: r.error,
    config: JSON.parse(r.config) as Record<string, unknown>,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    elsewhere: ((o) => (o ? describeOwner(o) : null))(runningElsewhere(r.status, r.owner)),
    games: games.map((g) => {
      const stored = g.play ? (JSON.parse(g.play) as { regret?: number; winRate?: number; rHint?: number; rNoHint?: number; error?: string; on?: string; estimator?: 'spade' | 'paired' }) : null;
      const play = stored && stored.error === undefined ? stored : null;
      const measured = { accepted: g.accepted === 1, r_no_hint: play?.rNoHint ?? null, regret: play?.regret ?? null, regret_estimator: play ? (play.estimator ?? 'paired') : null };
      return {
        idx: g.idx,
        skill: g.skill,
        accepted: g.accepted === 1,
        env_id: g.env_id,
        env_hash: g.env_hash,
        parents: JSON.parse(g.parents) as number[],
        hint: g.hint,
        hint_error: g.hint_error,
        hint_leak: g.hint_leak ? (JSON.parse(g.hint_leak) as { status: string; message: string }) : null,
        play_error: stored?.error ?? null,
        plays_on: play ? (play.on ?? 'local') : null,
        regret: play?.regret ?? null,
        regret_estimator: measured.regret_estimator,
        win_rate: play?.winRate ?? null,
        r_hint: play?.rHint ?? null,
        r_no_hint: play?.rNoHint ?? null,
        spade_blend: designBlend(measured),
        class: g.cls,
        difficulty_score: g.difficulty_score,
        attempts: (
          attempts.all(id, g.idx) as {
            n: number;
            model: string;
            prompt: string;
            answer: string;
            code: string;
            verdicts: string;
            rejected_because: string | null;
            seeds: string;
            messages: string;
            prompt_tokens: number | null;
            completion_tokens: number | null;
            ms: number;
            error: string | null;
          }[]
        ).map((a) => ({
          ...builtFrom(a.seeds, a.messages),
          n: a.n,
          model: a.model,
          prompt: a.prompt,
          answer: a.answer,
          code: a.code,
          verdicts: readVerdicts(a.verdicts).checks,
          rejected_because: a.rejected_because,
          acceptance: readVerdicts(a.verdicts).acceptance,
          tokens: { prompt: a.prompt_tokens, completion: a.completion_tokens },
          ms: a.ms,
          error: a.error,
        })),
      };
    }),
  };
}

/** The seeds, the grounding document, what built the prompt, and the system message sent (null: none). */
function builtFrom(seedsJson: string, messagesJson: string): { seeds: unknown; document: GroundingDoc | null; builder: string | null; system: string | null } {
  const { document, builder, ...seeds } = JSON.parse(seedsJson) as { document?: GroundingDoc; builder?: string };
  let system: string | null = null;
  try {
    const first = (JSON.parse(messagesJson) as { role?: string; content?: unknown }[])[0];
    if (first?.role === 'system' && typeof first.content === 'string') system = first.content;
  } catch {
    // an attempt without messages (the prompt could not be built)
  }
  return { seeds, document: document ?? null, builder: builder ?? null, system };
}

/**
 * What the designer may be shown: every environment in memory (or the named ones) with the numbers
 * it has. With a model named, a game that model played (a run record with a win rate) shows what it
 * measured instead of what a training run recorded: the seeds are then chosen for that agent.
 */
export function memoryRecords(db: Db, ids?: number[] | null, model?: string | null): MemoryRecord[] {
  const rows = db
    .prepare(
      `SELECT e.id, e.name, e.file_stem, e.skill, e.win_rate, e.regret, e.head_hash, substr(v.source, 1, ${SNIPPET_CHARS}) AS snippet
       FROM environments e JOIN versions v ON v.hash = e.head_hash WHERE e.rejected = 0 ORDER BY e.id`,
    )
    .all() as { id: number; name: string; file_stem: string | null; skill: string | null; win_rate: number | null; regret: number | null; head_hash: string; snippet: string }[];
  const measured = new Map<string, { win_rate: number; regret: number }>();
  if (model) {
    // The newest measurement per version by this model, with both numbers known.
    const m = db
      .prepare(
        `SELECT env_hash, win_rate, regret FROM model_run_envs WHERE model = ? AND win_rate IS NOT NULL AND regret IS NOT NULL ORDER BY updated_at`,
      )
      .all(model) as { env_hash: string; win_rate: number; regret: number }[];
    for (const r of m) measured.set(r.env_hash, r);
  }
  const keep = ids ? new Set(ids) : null;
  return rows
    .filter((r) => !keep || keep.has(r.id))
    .map((r) => {
      const m = measured.get(r.head_hash);
      return m
        ? { envId: r.id, name: r.file_stem ?? r.name, skill: r.skill, winRate: m.win_rate, regret: m.regret, snippet: r.snippet, source: `measured by ${model}` }
        : { envId: r.id, name: r.file_stem ?? r.name, skill: r.skill, winRate: r.win_rate, regret: r.regret, snippet: r.snippet, source: 'memory' };
    });
}

/** A parent as the layout names it: by content hash, so it resolves in any library holding the seed. */
export interface LayoutParent {
  name: string;
  sha256: string;
}

/** The seeds' names and head versions, for the layout's `<stem>.json` (ids mean nothing elsewhere). */
export function parentsByHash(db: Db, ids: number[]): LayoutParent[] {
  const out: LayoutParent[] = [];
  for (const id of ids) {
    const r = db.prepare('SELECT name, file_stem, head_hash FROM environments WHERE id = ?').get(id) as { name: string; file_stem: string | null; head_hash: string } | undefined;
    if (r) out.push({ name: r.file_stem ?? r.name, sha256: r.head_hash });
  }
  return out;
}
