import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import type { JobStore } from './jobStore';
import type { FileEntry, JobRecord, Transport } from './types';
import { errorMessage } from '../api';
import { DomainError } from '../errors';
import { regretPlaceholderReason } from './runFacts';

/** What the memory importer gives back, as far as jobs care. */
export interface ImportResult {
  imported: number;
  unchanged: number;
  updated: number;
  statsAttached: number;
}
export type EnvironmentImporter = (paths: string[], opts: { jobId: string; runId: string; regretPlaceholder?: string | undefined }) => Promise<ImportResult>;

export interface OutputDirs {
  gamesDir: string | null;
  cacheDir: string | null;
  rejectedDir: string | null;
}

const STEP_DIR = /^step_(\d+)$/;
const WANTED = /(\.py|_hint\.txt|\.reason\.txt|\.json)$/;
/** A file still being written by the run is left for the next poll (SPADE writes in place). */
const SETTLE_S = 1.5;

export interface FlowbackReport {
  fetched: number;
  imported: number;
  statsAttached: number;
  steps: number[];
}

/**
 * Brings a run's new environments back: games, cache step folders (with hints), rejected games
 * (with reasons) and env_memory.json, read in place on this machine or copied over SFTP into the
 * job's folder with the same layout, then handed to the memory importer linked to the job (the
 * importer reads the rollout step from `step_NNNNN/` in the path).
 */
export async function flowBack(
  job: JobRecord,
  t: Transport,
  dirs: OutputDirs,
  store: JobStore,
  localRoot: string,
  importer: EnvironmentImporter | null,
  final: boolean,
): Promise<FlowbackReport> {
  const nowS = Date.now() / 1000;
  const candidates: { entry: FileEntry; rel: string; step: number | null }[] = [];
  const scan = async (dir: string | null, relBase: string, step: number | null): Promise<void> => {
    if (!dir) return;
    const items = await t.list(dir);
    if (!items) return;
    for (const e of items) {
      if (e.isDir) {
        const m = STEP_DIR.exec(e.name);
        if (m && relBase.endsWith('spade_games_cache')) await scan(e.path, posix.join(relBase, e.name), Number(m[1]));
        continue;
      }
      if (!WANTED.test(e.name)) continue;
      candidates.push({ entry: e, rel: posix.join(relBase, e.name), step });
    }
  };
  await scan(dirs.gamesDir, 'games', null);
  await scan(dirs.cacheDir, 'spade_games_cache', null);
  await scan(dirs.rejectedDir, 'spade_games_rejected', null);

  const changed: { path: string; entry: FileEntry; step: number | null; isMemory: boolean }[] = [];
  for (const c of candidates) {
    const seen = store.fileSeen(job.id, c.entry.path);
    if (seen && seen.size === c.entry.size && seen.mtime === c.entry.mtime) continue;
    if (!final && nowS - c.entry.mtime < SETTLE_S) continue;
    let local = c.entry.path;
    if (t.label !== 'local') {
      local = join(localRoot, ...c.rel.split('/'));
      mkdirSync(dirname(local), { recursive: true });
      writeFileSync(local, await t.readFile(c.entry.path));
    }
    changed.push({ path: local, entry: c.entry, step: c.step, isMemory: c.entry.name === 'env_memory.json' });
  }
  // A game only counts once its hint is there too, so the importer sees the pair together.
  const ready = changed.filter((c) => {
    if (!c.entry.name.endsWith('.py') || final) return true;
    const hint = c.entry.path.replace(/\.py$/, '_hint.txt');
    return candidates.some((x) => x.entry.path === hint) || !c.entry.path.includes('spade_games_cache');
  });
  const report: FlowbackReport = { fetched: changed.length, imported: 0, statsAttached: 0, steps: [] };
  if (ready.length === 0) return report;
  const games = ready.filter((c) => c.entry.name.endsWith('.py')).map((c) => c.path);
  const memory = ready.filter((c) => c.isMemory).map((c) => c.path);
  let result = '';
  if (importer && games.length + memory.length > 0) {
    try {
      const r = await importer([...games, ...memory], { jobId: job.id, runId: job.id, regretPlaceholder: regretPlaceholderReason(job.spec) ?? undefined });
      report.imported = r.imported + r.updated;
      report.statsAttached = r.statsAttached;
      result = `imported ${r.imported}, updated ${r.updated}, unchanged ${r.unchanged}, stats ${r.statsAttached}`;
    } catch (e) {
      // Leave these files unrecorded so the next poll tries again.
      throw new DomainError('unavailable', `Importing environments from ${job.name} failed: ${errorMessage(e)}`);
    }
  } else if (!importer) result = 'fetched (no importer)';
  const steps = new Set<number>();
  for (const c of ready) {
    store.recordFile(job.id, c.entry.path, c.entry.size, c.entry.mtime, c.step, result);
    if (c.step !== null) steps.add(c.step);
  }
  report.steps = [...steps].sort((a, b) => a - b);
  return report;
}
