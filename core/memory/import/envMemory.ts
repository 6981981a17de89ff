/**
 * Layout 5, `env_memory.json`: SPADE's per-game stats, attached after everything else is imported to
 * the games it names, looked for within its own run.
 */
import { readFileSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { normaliseSkill, sha256 } from '../parse';
import { attachStats, envIdBySourcePrefix, envIdOfHash, type EnvStats } from '../repository';
import { envIdInJob, envIdUnderFolder } from '../runStatsStore';
import { entryFile, errReason, numOrNull } from './records';
import { MAX_JSON_BYTES, type ImportSession } from './session';

/** The run an env_memory.json belongs to: the folder holding its `spade_games_cache/` (SPADE's layout), else its own folder. */
function runFolderOf(memoryPath: string): string {
  const dir = dirname(memoryPath);
  return basename(dir) === 'spade_games_cache' ? dirname(dir) : dir;
}

/**
 * A file whose every record (two or more) has regret exactly 0.0 is SPADE's placeholder, not a
 * measurement (the learning_potential variant and Tinker runs write 0.0 for every game); a job
 * says so itself (ImportOptions.regretPlaceholder). Said as "not measured", never as 0.
 */
function allZeroRegret(records: unknown[]): string | undefined {
  if (records.length < 2) return undefined;
  const zero = records.every((r) => r && typeof r === 'object' && (r as Record<string, unknown>).regret === 0);
  return zero ? 'every record has regret 0.0 (SPADE\'s placeholder where regret is not computed)' : undefined;
}

/**
 * The environment an env_memory.json record is about, looked for within its own run: SPADE names
 * games `game_{rollout}_{index}_{skill}` in every run, so a file name is matched only among the
 * files this job brought back, then under this env_memory.json's output folder (the record's own
 * path first), and otherwise by the code (the whole source, or SPADE's first-2,000-characters
 * snippet of it). Never by name across the library: that landed records on other runs' games.
 */
function envForRecord(s: ImportSession, file: string | null, snippet: unknown, memoryPath: string): number | null {
  const name = file ? basename(file) : null;
  if (name) {
    if (s.opts.jobId) {
      const inJob = envIdInJob(s.db, s.opts.jobId, name);
      if (inJob !== null) return inJob;
    }
    const inFolder = envIdUnderFolder(s.db, runFolderOf(memoryPath), name, file);
    if (inFolder !== null) return inFolder;
  }
  if (typeof snippet !== 'string' || snippet.trim().length < 40) return null;
  const whole = envIdOfHash(s.db, sha256(snippet));
  if (whole !== null) return whole;
  if (snippet.length < 2000) return null;
  return envIdBySourcePrefix(s.db, snippet);
}

/** Attaches the stats of every env_memory.json the walk found (ImportSession.envMemory). */
export async function applyEnvMemory(s: ImportSession): Promise<void> {
  if (!s.envMemory.length) return;
  s.progress('stats');
  for (const { path } of s.envMemory) {
    let doc: unknown;
    try {
      if (statSync(path).size > MAX_JSON_BYTES) {
        s.skip(path, 'too large');
        continue;
      }
      doc = JSON.parse(readFileSync(path, 'utf8'));
    } catch (e) {
      s.skip(path, `broken JSON: ${errReason(e)}`);
      continue;
    }
    const records = Array.isArray(doc) ? doc : doc && typeof doc === 'object' ? ((doc as Record<string, unknown>).records ?? (doc as Record<string, unknown>).memory) : null;
    if (!Array.isArray(records)) {
      s.skip(path, 'env_memory.json is not a list of records');
      continue;
    }
    s.summary.files++;
    const placeholder = s.opts.regretPlaceholder ?? allZeroRegret(records);
    s.db.transaction(() => {
      records.forEach((rec: unknown, i) => {
        const where = `${path}#${i + 1}`;
        if (!rec || typeof rec !== 'object') return s.skipLine(where, 'not a JSON object');
        const r = rec as Record<string, unknown>;
        const file = typeof r.game_file === 'string' ? r.game_file : entryFile(r);
        const envId = envForRecord(s, file, r.code_snippet, path);
        if (envId === null) return s.skipLine(`${where} (${file ?? 'no game_file'})`, 'names a game that is not in the library');
        const meta = r.metadata && typeof r.metadata === 'object' ? (r.metadata as Record<string, unknown>) : {};
        // Our exporter writes SPADE's defaults where a value was unknown and lists them here.
        const unknown = new Set(Array.isArray(meta.workbench_unknown) ? meta.workbench_unknown : []);
        const stats: EnvStats = {
          winRate: numOrNull(r.actor_win_rate) ?? numOrNull(r.win_rate),
          regret: unknown.has('regret') || placeholder ? null : (numOrNull(r.regret) ?? numOrNull(meta.regret)),
          rHint: numOrNull(r.r_hint) ?? numOrNull(meta.r_hint),
          rNoHint: numOrNull(r.r_no_hint) ?? numOrNull(meta.r_no_hint),
        };
        if (attachStats(s.db, envId, stats, { rolloutStep: unknown.has('rollout_id') ? null : numOrNull(r.rollout_id), skill: normaliseSkill(r.skill) })) s.summary.statsAttached++;
      });
    }).immediate();
    await new Promise((r) => setImmediate(r));
    s.checkCancel();
  }
}
