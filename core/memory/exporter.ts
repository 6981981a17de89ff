/**
 * Writes a selection of environments back out:
 *
 *   exportEnvironments(db, ids, { format: 'spade' | 'jsonl', outDir }) -> { count, files }
 *
 * 'spade' is SPADE's own static-pool layout, so SPADE (and our importer) read it back:
 *   games/game_{rollout:05d}_{index:03d}_{skill_slug}.py   (a game's original SPADE name is kept)
 *   games/{stem}_hint.txt (verbatim), manifest.jsonl (our fields per game), env_memory.json (stats),
 *   spade_games_rejected/reject_{rollout:05d}_{idx:03d}_{slug}_{stage}.py + .reason.txt and
 *     spade_games_rejected/manifest.jsonl (rejected games: never in games/, which SPADE loads whole),
 *   tool_use/manifest.json + tool_use/{stem}.py (the tool-use release layout), checksums.sha256.
 * 'jsonl' is environments.jsonl, one environment per line with `code`, `hint`, `skill`, `name`...
 * Files are written to a temporary name and renamed, so a crash never leaves a half file.
 *
 * The files are planned in memory first (database reads only), then written. The app's server
 * writes with `exportEnvironmentsAsync`: no file-system call on its main thread may block. And
 * folders are made one level at a time, never with `mkdir -p`'s recursive flag: Node's recursive
 * mkdir spins forever on a path under /proc (`/proc/nope/seeds`), sync or async.
 */
import { mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, parse, resolve } from 'node:path';
import type { Db } from './db';
import { MANIFEST_FROM, parseGameStem, parseRejectedStem, sha256, skillSlug } from './parse';
import { getEnvironment } from './repository';
import { DomainError } from '../errors';
import { errorMessage } from '../api';
import { RunStore } from '../runs/runStore';
import { blendParts } from '../api/blendParts';

export interface ExportOptions {
  format: 'spade' | 'jsonl';
  outDir: string;
  /**
   * Whose measured numbers env_memory.json carries (a model run's model); absent: the newest
   * measurement by any model. A game no model run measured keeps what a training run recorded.
   */
  measuredBy?: string | null;
}

type Measured = ReturnType<RunStore['latest']>;

export interface ExportResult {
  count: number;
  files: string[];
  /** What the export left out and why (a file SPADE's layout has that had nothing to hold). */
  notes: string[];
}

/** The folders from the root down to `dir`, for making them one at a time. */
function ancestry(dir: string): string[] {
  const out: string[] = [];
  let d = resolve(dir);
  const root = parse(d).root;
  while (d !== root) {
    out.unshift(d);
    d = dirname(d);
  }
  return out;
}

function cannotCreate(dir: string, e: unknown): DomainError {
  const code = (e as NodeJS.ErrnoException | null)?.code ?? 'error';
  const why = code === 'ENOENT' ? 'its parent cannot hold folders' : code === 'ENOTDIR' ? 'a file is in the way' : code === 'EACCES' || code === 'EPERM' || code === 'EROFS' ? 'not allowed here' : code;
  return new DomainError('invalid_input', `Cannot create the folder ${dir}: ${why} (${code}). Choose another output folder.`);
}

/** `mkdir -p` without Node's recursive flag (see the file comment). */
export async function makeDirs(dir: string): Promise<void> {
  for (const d of ancestry(dir)) {
    try {
      await mkdir(d);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw cannotCreate(dir, e);
      const st = await stat(d).catch(() => null);
      if (!st?.isDirectory()) throw cannotCreate(dir, Object.assign(new Error('not a folder'), { code: 'ENOTDIR' }));
    }
  }
}

export function makeDirsSync(dir: string): void {
  for (const d of ancestry(dir)) {
    try {
      mkdirSync(d);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw cannotCreate(dir, e);
      let isDir = false;
      try {
        isDir = statSync(d).isDirectory();
      } catch {
        isDir = false;
      }
      if (!isDir) throw cannotCreate(dir, Object.assign(new Error('not a folder'), { code: 'ENOTDIR' }));
    }
  }
}

/** What an export writes: relative path -> content, in writing order. */
export interface ExportPlan {
  count: number;
  files: [string, string][];
  notes: string[];
}

/**
 * SPADE's designer reward of the measurement the export uses (the model's newest, `--model`), with
 * the model and run it came from; null when no model run measured the game's regret. Only in our
 * own files (manifest.jsonl, environments.jsonl): env_memory.json keeps SPADE's fields.
 */
function exportedBlend(m: Measured): Record<string, unknown> | null {
  const parts = m ? blendParts(m.rNoHint, m.regret, (m as { estimator?: unknown }).estimator) : null;
  return parts && m ? { ...parts, measured_by: m.model, run_id: m.runId } : null;
}

function record(d: NonNullable<ReturnType<typeof getEnvironment>>, measured: Measured): Record<string, unknown> {
  return {
    name: d.name,
    kind: d.kind,
    skill: d.skill,
    hash: d.hash,
    tags: d.tags,
    seed: d.seed,
    rating: d.rating,
    notes: d.notes || undefined,
    rollout_step: d.rolloutStep,
    source_run: d.sourceRun,
    validation: d.validation,
    flags: d.flags.length ? d.flags : undefined,
    rejected: d.rejected || undefined,
    rejection_stage: d.rejectionStage ?? undefined,
    rejection_reason: d.rejectionReason ?? undefined,
    win_rate: d.winRate,
    regret: d.regret,
    r_hint: d.rHint,
    r_no_hint: d.rNoHint,
    ...d.meta,
    spade_blend: exportedBlend(measured),
  };
}

/**
 * One env_memory.json record, or none. SPADE's samplers compare `actor_win_rate` and sort by
 * `regret`, so a null there crashes generation: both are always numbers. SPADE itself records only
 * games that were played this rollout (its win rate is a count over plays), so a game with no known
 * win rate gets no record, not a made-up rate (0.0 would list it as a "too hard" negative example).
 * An unknown regret is written as 0.0 and an unknown rollout as 0, SPADE's own defaults
 * (`EnvironmentRecord`, and the rollout's `_cached_regret.get(gf, 0.0)`), each named in
 * `metadata.workbench_unknown` so our importer does not read it back as a measured value.
 */
function memoryRecord(d: NonNullable<ReturnType<typeof getEnvironment>>, gameFile: string, measured: Measured): Record<string, unknown> | null {
  // What the workbench measured comes first (SPADE's sampler then reads real numbers for this
  // model); what a training run recorded stays beside it in metadata, named as such.
  const m = measured && measured.winRate !== null ? measured : null;
  const winRate = m ? m.winRate : d.winRate;
  const regret = m ? m.regret : d.regret;
  const rHint = m ? m.rHint : d.rHint;
  const rNoHint = m ? m.rNoHint : d.rNoHint;
  if (winRate === null || !Number.isFinite(winRate)) return null;
  const regretKnown = regret !== null && Number.isFinite(regret);
  const metadata: Record<string, unknown> = { class_name: d.name, hash: d.hash };
  if (m) {
    Object.assign(metadata, { source: 'measured', measured_by: m.model, run_id: m.runId, seeds: m.seeds, failed_episodes: m.failed });
    if (d.regret !== null && Number.isFinite(d.regret)) metadata.recorded_regret = d.regret;
    if (d.winRate !== null && Number.isFinite(d.winRate)) metadata.recorded_win_rate = d.winRate;
  } else metadata.source = 'recorded';
  if (rHint !== null && Number.isFinite(rHint)) metadata.r_hint = rHint;
  if (rNoHint !== null && Number.isFinite(rNoHint)) metadata.r_no_hint = rNoHint;
  if (d.hint) metadata.hint = d.hint.slice(0, 200);
  const unknown = [...(regretKnown ? [] : ['regret']), ...(d.rolloutStep === null ? ['rollout_id'] : [])];
  if (unknown.length) metadata.workbench_unknown = unknown;
  return {
    game_file: gameFile,
    skill: d.skill ?? '',
    code_snippet: d.source.slice(0, 2000),
    actor_win_rate: winRate,
    regret: regretKnown ? regret : 0.0,
    rollout_id: d.rolloutStep ?? 0,
    metadata,
  };
}

/** Reads the environments and lays out the files (nothing is written). */
export function planExport(db: Db, ids: number[], format: ExportOptions['format'], measuredBy: string | null = null): ExportPlan {
  const runs = new RunStore(db);
  const files: [string, string][] = [];
  const write = (rel: string, content: string) => {
    files.push([rel, content]);
  };
  if (format === 'jsonl') {
    const lines: string[] = [];
    for (const id of ids) {
      const d = getEnvironment(db, id);
      if (!d) throw new DomainError('not_found', `No environment ${id}`);
      lines.push(JSON.stringify({ code: d.source, hint: d.hint ?? undefined, ...record(d, runs.latest(d.hash, measuredBy)) }));
    }
    write('environments.jsonl', lines.length ? `${lines.join('\n')}\n` : '');
    return { count: ids.length, files, notes: [] };
  }

  const used = new Set<string>();
  const nextIndex = new Map<number, number>();
  const uniqueStem = (d: NonNullable<ReturnType<typeof getEnvironment>>): string => {
    const keep = d.rejected ? (stem: string) => parseRejectedStem(stem) !== null : (stem: string) => d.kind === 'tool-use' || parseGameStem(stem) !== null;
    if (d.fileStem && /^[\w.-]+$/.test(d.fileStem) && !used.has(d.fileStem) && keep(d.fileStem)) {
      used.add(d.fileStem);
      return d.fileStem;
    }
    if (d.kind === 'tool-use' && !d.rejected) {
      let base = d.name.replace(/\W+/g, '_').toLowerCase() || 'tool_env';
      while (used.has(base)) base = `${base}_${d.hash.slice(0, 6)}`;
      used.add(base);
      return base;
    }
    const rollout = d.rolloutStep ?? 0;
    const slug = skillSlug(d.skill ?? 'unknown') || 'unknown';
    // SPADE's reject names end in the stage; one the workbench does not know is written as `unknown`.
    const stage = d.rejected ? `_${(d.rejectionStage ?? '').replace(/\W+/g, '_') || 'unknown'}` : '';
    for (;;) {
      const idx = nextIndex.get(rollout) ?? 0;
      nextIndex.set(rollout, idx + 1);
      const stem = `${d.rejected ? 'reject' : 'game'}_${String(rollout).padStart(5, '0')}_${String(idx).padStart(3, '0')}_${slug}${stage}`;
      if (!used.has(stem)) {
        used.add(stem);
        return stem;
      }
    }
  };

  const manifest: string[] = [];
  const rejectedManifest: string[] = [];
  const memory: Record<string, unknown>[] = [];
  const toolEntries: Record<string, unknown>[] = [];
  for (const id of ids) {
    const d = getEnvironment(db, id);
    if (!d) throw new DomainError('not_found', `No environment ${id}`);
    const stem = uniqueStem(d);
    const measured = runs.latest(d.hash, measuredBy);
    if (d.rejected) {
      // Where SPADE's save_rejected_game puts them: beside games/, never in it (its loader
      // globs game_*.py there), and never in a tool-use manifest (whose entries are loaded as the pool).
      write(`spade_games_rejected/${stem}.py`, d.source);
      if (d.rejectionReason !== null && stem.startsWith('reject_')) write(`spade_games_rejected/${stem}.reason.txt`, d.rejectionReason);
      if (d.hint) write(`spade_games_rejected/${stem}_hint.txt`, d.hint);
      rejectedManifest.push(JSON.stringify({ file: `${stem}.py`, ...record(d, measured) }));
      continue;
    }
    if (d.kind === 'tool-use') {
      write(`tool_use/${stem}.py`, d.source);
      if (d.hint) write(`tool_use/${stem}_hint.txt`, d.hint);
      const { manifest: original, ...rest } = record(d, measured) as Record<string, unknown> & { manifest?: Record<string, unknown> };
      // An environment that came with no release entry (a loose file, the editor, a design round)
      // gets one made here, marked so: the importer keeps a release's own entry as the
      // environment's metadata, and taking this one for that would make re-importing the export
      // "updated" (MANIFEST_FROM_WORKBENCH in importer.ts).
      toolEntries.push({ ...(original ?? {}), ...rest, file: `${stem}.py`, training_step: d.rolloutStep, mean_reward: null, solve_rate: null, ...(original ? {} : { [MANIFEST_FROM]: 'workbench' }) });
      continue;
    }
    write(`games/${stem}.py`, d.source);
    // Verbatim: SPADE writes hint_full as is and shows it to the agent whitespace included.
    if (d.hint) write(`games/${stem}_hint.txt`, d.hint);
    manifest.push(JSON.stringify({ file: `games/${stem}.py`, ...record(d, measured) }));
    const entry = memoryRecord(d, `${stem}.py`, measured);
    if (entry) memory.push(entry);
  }
  if (manifest.length) write('manifest.jsonl', `${manifest.join('\n')}\n`);
  if (rejectedManifest.length) write('spade_games_rejected/manifest.jsonl', `${rejectedManifest.join('\n')}\n`);
  const notes: string[] = [];
  if (memory.length) write('env_memory.json', `${JSON.stringify(memory, null, 2)}\n`);
  // SPADE's memory holds only games with numbers (memoryRecord): say why the file is missing.
  else if (manifest.length)
    notes.push(
      `no env_memory.json: none of the ${manifest.length} game${manifest.length === 1 ? '' : 's'} has a win rate (no model run measured ${manifest.length === 1 ? 'it' : 'them'}${measuredBy ? ` with ${measuredBy}` : ''} and no training run recorded one); SPADE's environment memory needs numbers, so play them (play, regret) and export again`,
    );
  if (toolEntries.length) write('tool_use/manifest.json', `${JSON.stringify({ environments: toolEntries }, null, 2)}\n`);
  // Same format as `sha256sum`, so `sha256sum -c checksums.sha256` verifies the export by hand.
  const sums = files.map(([f, content]) => `${sha256(content)}  ${f}`);
  if (sums.length) write('checksums.sha256', `${sums.join('\n')}\n`);
  return { count: ids.length, files, notes };
}

/** For callers off the server's main thread (the CLI, a job's private temp folder). */
export function exportEnvironments(db: Db, ids: number[], opts: ExportOptions): ExportResult {
  const plan = planExport(db, ids, opts.format, opts.measuredBy ?? null);
  makeDirsSync(opts.outDir);
  for (const [rel, content] of plan.files) {
    const path = join(opts.outDir, rel);
    makeDirsSync(dirname(path));
    const tmp = `${path}.partial-${process.pid}`;
    writeFileSync(tmp, content);
    renameSync(tmp, path);
  }
  return { count: plan.count, files: plan.files.map(([f]) => f), notes: plan.notes };
}

/** The server's export: the same files, written without blocking the event loop. */
export async function exportEnvironmentsAsync(db: Db, ids: number[], opts: ExportOptions): Promise<ExportResult> {
  const plan = planExport(db, ids, opts.format, opts.measuredBy ?? null);
  await makeDirs(opts.outDir);
  for (const [rel, content] of plan.files) {
    const path = join(opts.outDir, rel);
    await makeDirs(dirname(path));
    const tmp = `${path}.partial-${process.pid}`;
    try {
      await writeFile(tmp, content);
      await rename(tmp, path);
    } catch (e) {
      await unlink(tmp).catch(() => {});
      throw new DomainError('invalid_input', `Cannot write ${path}: ${(e as NodeJS.ErrnoException).code ?? errorMessage(e)}`);
    }
  }
  return { count: plan.count, files: plan.files.map(([f]) => f), notes: plan.notes };
}

