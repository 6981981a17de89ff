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
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Db } from './db';
import { parseGameStem, sha256, skillSlug } from './parse';
import { getEnvironment } from './repository';
import { DomainError } from '../errors';

export interface ExportOptions {
  format: 'spade' | 'jsonl';
  outDir: string;
}

export interface ExportResult {
  count: number;
  files: string[];
}

function writeAtomic(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.partial-${process.pid}`;
  writeFileSync(tmp, content);
  renameSync(tmp, path);
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

export function exportEnvironments(db: Db, ids: number[], opts: ExportOptions): ExportResult {
  const files: string[] = [];
  const write = (rel: string, content: string) => {
    writeAtomic(join(opts.outDir, rel), content);
    files.push(rel);
  };
  mkdirSync(opts.outDir, { recursive: true });
  if (opts.format === 'jsonl') {
    const lines: string[] = [];
    for (const id of ids) {
      const d = getEnvironment(db, id);
      if (!d) throw new DomainError('not_found', `No environment ${id}`);
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
    if (!d) throw new DomainError('not_found', `No environment ${id}`);
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
  const sums = files.map((f) => `${sha256(readFileSync(join(opts.outDir, f)))}  ${f}`);
  if (sums.length) write('checksums.sha256', `${sums.join('\n')}\n`);
  return { count: ids.length, files };
}

