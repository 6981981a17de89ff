/**
 * Writes a selection of environments back out:
 *
 *   exportEnvironments(db, ids, { format: 'spade' | 'jsonl', outDir }) -> { count, files }
 *
 * 'spade' is SPADE's own static-pool layout, so SPADE (and our importer) read it back:
 *   games/game_{rollout:05d}_{index:03d}_{skill_slug}.py   (a game's original SPADE name is kept)
 *   games/{stem}_hint.txt, manifest.jsonl (our fields per game), env_memory.json (stats),
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
import { ApiError } from '../api';
import type { Db } from './db';
import { parseGameStem, sha256, skillSlug } from './parse';
import { getEnvironment } from './repository';

export interface ExportOptions {
  format: 'spade' | 'jsonl';
  outDir: string;
}

export interface ExportResult {
  count: number;
  files: string[];
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

function cannotCreate(dir: string, e: unknown): ApiError {
  const code = (e as NodeJS.ErrnoException | null)?.code ?? 'error';
  const why = code === 'ENOENT' ? 'its parent cannot hold folders' : code === 'ENOTDIR' ? 'a file is in the way' : code === 'EACCES' || code === 'EPERM' || code === 'EROFS' ? 'not allowed here' : code;
  return new ApiError('invalid_input', `Cannot create the folder ${dir}: ${why} (${code}). Choose another output folder.`);
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
}

function record(d: NonNullable<ReturnType<typeof getEnvironment>>): Record<string, unknown> {
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
  };
}

/** Reads the environments and lays out the files (nothing is written). */
export function planExport(db: Db, ids: number[], format: ExportOptions['format']): ExportPlan {
  const files: [string, string][] = [];
  const write = (rel: string, content: string) => {
    files.push([rel, content]);
  };
  if (format === 'jsonl') {
    const lines: string[] = [];
    for (const id of ids) {
      const d = getEnvironment(db, id);
      if (!d) throw new ApiError('not_found', `No environment ${id}`);
      lines.push(JSON.stringify({ code: d.source, hint: d.hint ?? undefined, ...record(d) }));
    }
    write('environments.jsonl', lines.length ? `${lines.join('\n')}\n` : '');
    return { count: ids.length, files };
  }

  const used = new Set<string>();
  const nextIndex = new Map<number, number>();
  const uniqueStem = (d: NonNullable<ReturnType<typeof getEnvironment>>): string => {
    if (d.fileStem && /^[\w.-]+$/.test(d.fileStem) && !used.has(d.fileStem) && (d.kind === 'tool-use' || parseGameStem(d.fileStem))) {
      used.add(d.fileStem);
      return d.fileStem;
    }
    if (d.kind === 'tool-use') {
      let base = d.name.replace(/\W+/g, '_').toLowerCase() || 'tool_env';
      while (used.has(base)) base = `${base}_${d.hash.slice(0, 6)}`;
      used.add(base);
      return base;
    }
    const rollout = d.rolloutStep ?? 0;
    const slug = skillSlug(d.skill ?? 'unknown') || 'unknown';
    for (;;) {
      const idx = nextIndex.get(rollout) ?? 0;
      nextIndex.set(rollout, idx + 1);
      const stem = `game_${String(rollout).padStart(5, '0')}_${String(idx).padStart(3, '0')}_${slug}`;
      if (!used.has(stem)) {
        used.add(stem);
        return stem;
      }
    }
  };

  const manifest: string[] = [];
  const memory: Record<string, unknown>[] = [];
  const toolEntries: Record<string, unknown>[] = [];
  for (const id of ids) {
    const d = getEnvironment(db, id);
    if (!d) throw new ApiError('not_found', `No environment ${id}`);
    const stem = uniqueStem(d);
    if (d.kind === 'tool-use') {
      write(`tool_use/${stem}.py`, d.source);
      if (d.hint) write(`tool_use/${stem}_hint.txt`, `${d.hint}\n`);
      const { manifest: original, ...rest } = record(d) as Record<string, unknown> & { manifest?: Record<string, unknown> };
      toolEntries.push({ ...(original ?? {}), ...rest, file: `${stem}.py`, training_step: d.rolloutStep, mean_reward: null, solve_rate: null });
      continue;
    }
    write(`games/${stem}.py`, d.source);
    if (d.hint) write(`games/${stem}_hint.txt`, `${d.hint}\n`);
    manifest.push(JSON.stringify({ file: `games/${stem}.py`, ...record(d) }));
    memory.push({
      game_file: `${stem}.py`,
      skill: d.skill,
      code_snippet: d.source.slice(0, 2000),
      actor_win_rate: d.winRate,
      regret: d.regret,
      rollout_id: d.rolloutStep,
      metadata: { r_hint: d.rHint, r_no_hint: d.rNoHint, hint: d.hint?.slice(0, 200) ?? null, class_name: d.name, hash: d.hash },
    });
  }
  if (manifest.length) {
    write('manifest.jsonl', `${manifest.join('\n')}\n`);
    write('env_memory.json', `${JSON.stringify(memory, null, 2)}\n`);
  }
  if (toolEntries.length) write('tool_use/manifest.json', `${JSON.stringify({ environments: toolEntries }, null, 2)}\n`);
  // Same format as `sha256sum`, so `sha256sum -c checksums.sha256` verifies the export by hand.
  const sums = files.map(([f, content]) => `${sha256(content)}  ${f}`);
  if (sums.length) write('checksums.sha256', `${sums.join('\n')}\n`);
  return { count: ids.length, files };
}

/** For callers off the server's main thread (the CLI, a job's private temp folder). */
export function exportEnvironments(db: Db, ids: number[], opts: ExportOptions): ExportResult {
  const plan = planExport(db, ids, opts.format);
  makeDirsSync(opts.outDir);
  for (const [rel, content] of plan.files) {
    const path = join(opts.outDir, rel);
    makeDirsSync(dirname(path));
    const tmp = `${path}.partial-${process.pid}`;
    writeFileSync(tmp, content);
    renameSync(tmp, path);
  }
  return { count: plan.count, files: plan.files.map(([f]) => f) };
}

/** The server's export: the same files, written without blocking the event loop. */
export async function exportEnvironmentsAsync(db: Db, ids: number[], opts: ExportOptions): Promise<ExportResult> {
  const plan = planExport(db, ids, opts.format);
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
      throw new ApiError('invalid_input', `Cannot write ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
    }
  }
  return { count: plan.count, files: plan.files.map(([f]) => f) };
}

