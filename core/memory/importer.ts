/**
 * Importers for every layout SPADE writes (docs/spade-formats.md section 6), behind one call:
 *
 *   importPaths(db, paths, { onProgress, signal, runId, rolloutStep, jobId }) -> ImportSummary
 *
 * Files and folders, recursive. Layouts recognised per folder:
 *   1. games: `game_*.py` with sibling `{stem}_hint.txt` and `{stem}.json` spec; `step_NNNNN/` gives the rollout step
 *      (import/games.ts);
 *   2. rejected: `spade_games_rejected/reject_..._{stage}.py` + `.reason.txt`, `rejected/rej_*.py` (import/rejected.ts);
 *   3. static pool: `manifest.jsonl` (+ `validation_manifest.jsonl`) naming files, `checksums.sha256` verified
 *      (import/staticPool.ts);
 *   4. tool-use release: `manifest.json` listing one `.py` per environment, its fields kept (import/toolRelease.ts);
 *   5. `env_memory.json`: stats attached, after everything else, to the games it names (import/envMemory.ts);
 *   6. any other `*.jsonl`: one environment per line (`code`, optional `hint`, `skill`, `name`, other keys kept)
 *      (import/jsonl.ts).
 * This file is the dispatcher: it walks the chosen paths and hands each file to its layout by name;
 * import/session.ts holds the import in progress (limits, skipped files, batches).
 * Streaming (JSONL is read in chunks, files one at a time), committed in batches, idempotent
 * (content hashes), and every file that is not imported is listed in the summary with its reason.
 * A kill between batches loses only the batch in flight; re-running finishes the job.
 */
import { lstatSync, readdirSync, realpathSync, statSync, type Dirent } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import type { ImportSummary } from '../api';
import type { Db } from './db';
import { attachRunReturns } from './runStats';
import { recordJobImport } from './importLogStore';
import { applyEnvMemory } from './import/envMemory';
import { importGame } from './import/games';
import { importJsonl } from './import/jsonl';
import { errReason } from './import/records';
import { Cancelled, ImportSession, type ImportOptions } from './import/session';
import { importPoolManifest, loadChecksums, loadValidation } from './import/staticPool';
import { importToolManifest } from './import/toolRelease';

// Kept importable from here, where they were first defined.
export { fieldsFromRecord, reasonKind } from './import/records';
export { DEFAULT_MAX_SOURCE_BYTES, NOT_FOLLOWED, type ImportOptions, type WorkerImportOptions } from './import/session';

const IGNORED_DIRS = new Set(['.git', '__pycache__', 'node_modules', '.ipynb_checkpoints']);
/** Documentation and OS litter beside environments: not environments, and not worth a line in the summary. */
const DOC_FILES = /^(README|LICENSE|NOTICE|CHANGELOG|COPYING)(\.[\w.]+)?$|^\.DS_Store$|^\.gitignore$|^Thumbs\.db$/i;
/** Files that belong to SPADE layouts but carry nothing to import by themselves. */
const KNOWN_COMPANIONS = new Set(['validation_summary.json', 'snapshot_summary.json', 'checksums.sha256', 'validation_manifest.jsonl']);

function isDanglingLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Visits every chosen path, then attaches what env_memory.json files and the job's log say. */
async function walkPaths(s: ImportSession, paths: string[]): Promise<void> {
  s.progress('scanning');
  for (const p of paths) {
    try {
      const real = realpathSync(resolve(p));
      s.roots.push(statSync(real).isDirectory() ? real : dirname(real));
    } catch {
      // reported below when the path is visited
    }
  }
  for (const p of paths) {
    const abs = resolve(p);
    let st;
    try {
      st = statSync(abs);
    } catch (e) {
      // A path the user typed that is not there was never a broken link.
      const gone = (e as NodeJS.ErrnoException).code === 'ENOENT' && !isDanglingLink(abs);
      s.skip(abs, gone ? 'no such file or folder' : errReason(e));
      continue;
    }
    if (st.isDirectory()) await walkDir(s, abs);
    else if (st.isFile()) await importFile(s, abs);
    else s.skip(abs, 'not a regular file or folder');
  }
  await s.flush();
  await applyEnvMemory(s);
  // The job's log named each game's two returns ([REGRET] lines): they attach to the games it brought back.
  if (s.opts.jobId) s.summary.statsAttached += attachRunReturns(s.db, s.opts.jobId);
}

async function walkDir(s: ImportSession, dir: string): Promise<void> {
  s.checkCancel();
  let real: string;
  let entries: Dirent[];
  try {
    real = realpathSync(dir);
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    s.skip(dir, errReason(e));
    return;
  }
  if (s.visited.has(real)) {
    s.skip(dir, `folder already visited as ${real} (symlink cycle)`);
    return;
  }
  s.visited.add(real);
  const names = new Set(entries.map((e) => e.name));
  if (names.has('checksums.sha256')) loadChecksums(s, join(dir, 'checksums.sha256'));
  if (names.has('validation_manifest.jsonl')) await loadValidation(s, join(dir, 'validation_manifest.jsonl'));
  if (names.has('manifest.jsonl')) await importPoolManifest(s, join(dir, 'manifest.jsonl'));
  if (names.has('manifest.json')) await importToolManifest(s, join(dir, 'manifest.json'));
  for (const n of KNOWN_COMPANIONS) if (names.has(n)) s.consumed.add(join(dir, n));

  // Programs first so their hint/spec/reason companions are claimed before strays are reported.
  const rank = (n: string) => (n.endsWith('.py') ? 0 : n.endsWith('.jsonl') ? 1 : 2);
  const sorted = [...entries].sort((a, b) => rank(a.name) - rank(b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const subdirs: string[] = [];
  for (const ent of sorted) {
    const path = join(dir, ent.name);
    if (s.consumed.has(path)) continue;
    let isDir = ent.isDirectory();
    let isFile = ent.isFile();
    if (ent.isSymbolicLink()) {
      if (s.refuseOutside(path)) continue;
      try {
        const st = statSync(path);
        isDir = st.isDirectory();
        isFile = st.isFile();
      } catch (e) {
        s.skip(path, errReason(e) === 'missing (broken link or removed during import)' ? 'broken symlink' : errReason(e));
        continue;
      }
    }
    if (isDir) {
      if (!IGNORED_DIRS.has(ent.name)) subdirs.push(path);
    } else if (isFile) await importFile(s, path);
    else s.skip(path, 'not a regular file (device, socket or pipe)');
  }
  for (const sub of subdirs) await walkDir(s, sub);
}

/** The layout a file belongs to, by its name (a folder's manifests were read before its files). */
async function importFile(s: ImportSession, path: string): Promise<void> {
  if (s.consumed.has(path)) return;
  const name = basename(path);
  if (name.endsWith('.py')) return importGame(s, path, {});
  if (name === 'env_memory.json') {
    s.consumed.add(path);
    s.envMemory.push({ path });
    return;
  }
  if (name === 'manifest.jsonl') return importPoolManifest(s, path);
  if (name === 'manifest.json') return importToolManifest(s, path);
  if (name === 'checksums.sha256') return loadChecksums(s, path);
  if (name.endsWith('.jsonl')) return importJsonl(s, path);
  s.consumed.add(path);
  if (KNOWN_COMPANIONS.has(name) || DOC_FILES.test(name)) return;
  if (name.endsWith('_hint.txt')) return s.skip(path, `hint without its game (${name.slice(0, -'_hint.txt'.length)}.py is not beside it)`);
  if (name.endsWith('.reason.txt')) return s.skip(path, 'rejection reason without its game file');
  s.skip(path, `not an environment file (${extname(name) || 'no extension'})`);
}

export async function importPaths(db: Db, paths: string[], opts: ImportOptions = {}): Promise<ImportSummary> {
  const run = new ImportSession(db, paths, opts);
  try {
    await walkPaths(run, paths);
  } catch (e) {
    if (!(e instanceof Cancelled)) throw e;
    run.summary.cancelled = true;
  } finally {
    run.closeSkippedLog();
    run.closeSyntax();
  }
  const summary = run.finish();
  if (opts.jobId) recordJobImport(db, opts.jobId, summary);
  run.progress('done');
  return summary;
}
