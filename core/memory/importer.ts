/**
 * Importers for every layout SPADE writes (docs/spade-formats.md section 6), behind one call:
 *
 *   importPaths(db, paths, { onProgress, signal, runId, rolloutStep, jobId }) -> ImportSummary
 *
 * Files and folders, recursive. Layouts recognised per folder:
 *   1. games: `game_*.py` with sibling `{stem}_hint.txt` and `{stem}.json` spec; `step_NNNNN/` gives the rollout step;
 *   2. rejected: `spade_games_rejected/reject_..._{stage}.py` + `.reason.txt`, `rejected/rej_*.py`;
 *   3. static pool: `manifest.jsonl` (+ `validation_manifest.jsonl`) naming files, `checksums.sha256` verified;
 *   4. tool-use release: `manifest.json` listing one `.py` per environment, its fields kept;
 *   5. `env_memory.json`: stats attached, after everything else, to the games it names;
 *   6. any other `*.jsonl`: one environment per line (`code`, optional `hint`, `skill`, `name`, other keys kept).
 * Streaming (JSONL is read in chunks, files one at a time), committed in batches, idempotent
 * (content hashes), and every file that is not imported is listed in the summary with its reason.
 * A kill between batches loses only the batch in flight; re-running finishes the job.
 */
import { closeSync, createReadStream, existsSync, mkdirSync, openSync, readdirSync, readFileSync, realpathSync, statSync, lstatSync, writeSync, type Dirent } from 'node:fs';
import { basename, dirname, extname, join, resolve, sep } from 'node:path';
import { errorMessage, type ImportProgress, type ImportSummary } from '../api';
import { SKIPPED_EXAMPLES } from '../api/calls/memory';
import { hintTooLarge, MAX_HINT_BYTES, MAX_SOURCE_BYTES } from '../api/limits';
import type { Db } from './db';
import { decodeSource, findClassName, MANIFEST_FROM, normaliseSkill, parseGameStem, parseRejectedHeader, parseRejectedStem, rolloutFromPath, sha256 } from './parse';
import { attachStats, envIdBySourcePrefix, envIdOfHash, ingest, type EnvCandidate, type EnvStats } from './repository';
import { envIdInJob, envIdUnderFolder } from './runStatsStore';
import { attachRunReturns } from './runStats';
import { PythonSyntaxChecker } from '../runtime/pythonSyntax';
import { recordJobImport } from './importLogStore';

export interface ImportOptions {
  onProgress?: (p: Omit<ImportProgress, 'jobId'>) => void;
  signal?: AbortSignal;
  /** Attach every imported environment to this run (e.g. a job's SPADE run id). */
  runId?: string;
  /** Rollout step for files whose path does not say. */
  rolloutStep?: number;
  jobId?: string;
  batchSize?: number;
  /** Largest single environment source accepted (a generated game is ~10 KB). */
  maxSourceBytes?: number;
  /**
   * Read files that manifests, checksums or symlinks place outside the chosen paths. Off by default:
   * a downloaded pool must not make the import read ~/.ssh or /etc; what was not followed is listed.
   */
  followLinks?: boolean;
  /**
   * Every skipped file or line, one JSON object per line, streamed here as it happens (the summary
   * keeps only the first examples and counts). Written only when something is skipped.
   */
  skippedLog?: string;
  /**
   * Compile each new source with Python's parser (never running it) and flag the ones SPADE
   * would reject at exec: a file with a syntax error must not arrive silently with a skill and
   * step read from its name. On by default; off where no python3 is wanted.
   */
  checkSyntax?: boolean;
  /**
   * Why this run's env_memory.json `regret` is SPADE's 0.0 placeholder, not a measurement (the
   * learning_potential variant and Tinker runs never set it: spade/slime/spade_rollout.py:731).
   * Such a regret is imported as not measured.
   */
  regretPlaceholder?: string;
}

/** What crosses to the import worker (plain data; callbacks and signals stay on each side). */
export type WorkerImportOptions = Pick<ImportOptions, 'runId' | 'jobId' | 'rolloutStep' | 'followLinks' | 'skippedLog' | 'regretPlaceholder'>;

export const NOT_FOLLOWED = 'outside the chosen folders, not followed';

/** One limit with the editor, the API and design rounds (core/api/limits.ts): what is stored and exported comes back in. */
export const DEFAULT_MAX_SOURCE_BYTES = MAX_SOURCE_BYTES;
const MAX_JSON_BYTES = 256 * 1024 * 1024;
const IGNORED_DIRS = new Set(['.git', '__pycache__', 'node_modules', '.ipynb_checkpoints']);
/** Files that belong to SPADE layouts but carry nothing to import by themselves. */
/** Documentation and OS litter beside environments: not environments, and not worth a line in the summary. */
const DOC_FILES = /^(README|LICENSE|NOTICE|CHANGELOG|COPYING)(\.[\w.]+)?$|^\.DS_Store$|^\.gitignore$|^Thumbs\.db$/i;
const KNOWN_COMPANIONS = new Set(['validation_summary.json', 'snapshot_summary.json', 'checksums.sha256', 'validation_manifest.jsonl']);

class Cancelled extends Error {}

const fileKeys = ['file', 'game_file', 'path', 'filename', 'py_file', 'env_file', 'source_file'];
function entryFile(e: Record<string, unknown>): string | null {
  for (const k of fileKeys) if (typeof e[k] === 'string' && e[k]) return e[k] as string;
  return null;
}

function numOrNull(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() && Number.isFinite(Number(v))) return Number(v);
  return null;
}

function isDanglingLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

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

function errReason(e: unknown): string {
  const code = (e as NodeJS.ErrnoException)?.code;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied (unreadable)';
  if (code === 'ELOOP') return 'symlink loop';
  if (code === 'ENOENT') return 'missing (broken link or removed during import)';
  if (code === 'EISDIR') return 'is a directory';
  return errorMessage(e);
}

/** The reason's kind, for counting: the words before any detail ("broken JSON: Unexpected token" -> "broken JSON"). */
export function reasonKind(reason: string): string {
  return reason.split(/[:(]/, 1)[0]!.trim() || reason.slice(0, 60);
}

/** The fields every structured source (manifest line, JSONL line, spec file) may carry. */
const consumedKeys = new Set([
  'code', 'source', 'hint', 'hint_full', 'skill', 'name', 'class_name', 'kind', 'tags', 'seed', 'notes', 'rating',
  'rejected', 'rejection_stage', 'stage', 'rejection_reason', 'reason', 'validation', 'valid', 'status',
  'win_rate', 'actor_win_rate', 'regret', 'r_hint', 'r_no_hint', 'rollout_step', 'rollout_id', 'rollout', 'training_step', 'step',
  'source_run', 'run', 'hash', 'file_stem', 'flags', MANIFEST_FROM, ...fileKeys,
  // Derived from the numbers above when exported (exporter.ts): never kept as the game's metadata.
  'spade_blend',
]);

export function fieldsFromRecord(o: Record<string, unknown>): Partial<EnvCandidate> {
  const out: Partial<EnvCandidate> = {};
  const hint = typeof o.hint_full === 'string' && o.hint_full ? o.hint_full : typeof o.hint === 'string' && o.hint ? o.hint : null;
  if (hint) out.hint = hint;
  const skill = normaliseSkill(o.skill);
  if (skill) out.skill = skill;
  // Our own manifests say `skill: null` for "not known": that beats the `unknown` slug a SPADE file name needs.
  else if (o.skill === null) out.skill = null;
  const name = typeof o.name === 'string' && /^\w+$/.test(o.name) ? o.name : typeof o.class_name === 'string' ? o.class_name : null;
  if (name) out.name = name;
  if (o.kind === 'game' || o.kind === 'tool-use') out.kind = o.kind;
  if (Array.isArray(o.tags)) out.tags = o.tags.filter((t): t is string => typeof t === 'string' && /^[^\s,]{1,64}$/.test(t));
  if (o.seed === true) out.seed = true;
  if (typeof o.notes === 'string') out.notes = o.notes;
  const rating = numOrNull(o.rating);
  if (rating !== null && Number.isInteger(rating) && rating >= 0 && rating <= 5) out.rating = rating;
  if (o.rejected === true || typeof o.rejection_stage === 'string') {
    const stage = typeof o.rejection_stage === 'string' ? o.rejection_stage : typeof o.stage === 'string' ? o.stage : null;
    const reason = typeof o.rejection_reason === 'string' ? o.rejection_reason : typeof o.reason === 'string' ? o.reason : null;
    out.rejected = { stage, reason };
  }
  if (typeof o.validation === 'string') out.validation = o.validation;
  else if (typeof o.valid === 'boolean') out.validation = o.valid ? 'valid' : 'invalid';
  else if (typeof o.status === 'string') out.validation = o.status;
  if (Array.isArray(o.flags)) out.flags = o.flags.filter((f): f is string => typeof f === 'string');
  const stats: EnvStats = {};
  const win = numOrNull(o.win_rate) ?? numOrNull(o.actor_win_rate);
  if (win !== null) stats.winRate = win;
  for (const [k, key] of [['regret', 'regret'], ['r_hint', 'rHint'], ['r_no_hint', 'rNoHint']] as const) {
    const v = numOrNull(o[k]);
    if (v !== null) stats[key] = v;
  }
  if (Object.keys(stats).length) out.stats = stats;
  const step = numOrNull(o.rollout_step) ?? numOrNull(o.rollout_id) ?? numOrNull(o.rollout) ?? numOrNull(o.training_step) ?? numOrNull(o.step);
  if (step !== null && Number.isInteger(step)) out.rolloutStep = step;
  // Likewise `rollout_step: null` beats the 00000 in the file name.
  else if (o.rollout_step === null) out.rolloutStep = null;
  const run = typeof o.source_run === 'string' ? o.source_run : typeof o.run === 'string' ? o.run : null;
  if (run) out.run = run;
  if (typeof o.file_stem === 'string') out.fileStem = o.file_stem;
  const meta = Object.fromEntries(Object.entries(o).filter(([k]) => !consumedKeys.has(k)));
  if (Object.keys(meta).length) out.meta = meta;
  return out;
}

function merge(base: EnvCandidate, extra: Partial<EnvCandidate>): EnvCandidate {
  const out: EnvCandidate = { ...base };
  for (const [k, v] of Object.entries(extra) as [keyof EnvCandidate, never][]) {
    // An explicit null skill or step (our manifest's "not known") replaces a guess from the file name.
    if (v === undefined || (v === null && k !== 'rolloutStep' && k !== 'skill')) continue;
    if (k === 'flags') out.flags = [...(base.flags ?? []), ...(v as string[])];
    else if (k === 'meta') out.meta = { ...(base.meta ?? {}), ...(v as Record<string, unknown>) };
    else if (k === 'tags') out.tags = [...new Set([...(base.tags ?? []), ...(v as string[])])];
    else (out as unknown as Record<string, unknown>)[k] = v;
  }
  return out;
}

/** Splits a byte stream on newlines without holding more than one line (bounded) in memory. */
async function* readLines(path: string, maxLine: number): AsyncGenerator<{ n: number; bytes: Buffer | null }> {
  let carry: Buffer[] = [];
  let carryLen = 0;
  let oversized = false;
  let n = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) break;
      n++;
      const part = chunk.subarray(start, nl);
      if (oversized || carryLen + part.length > maxLine) yield { n, bytes: null };
      else yield { n, bytes: carry.length ? Buffer.concat([...carry, part]) : part };
      carry = [];
      carryLen = 0;
      oversized = false;
      start = nl + 1;
    }
    const rest = chunk.subarray(start);
    if (rest.length) {
      if (carryLen + rest.length > maxLine) {
        oversized = true;
        carry = [];
        carryLen = 0;
      } else if (!oversized) {
        carry.push(Buffer.from(rest));
        carryLen += rest.length;
      }
    }
  }
  if (carryLen || oversized) yield { n: n + 1, bytes: oversized ? null : Buffer.concat(carry) };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

interface EnvMemoryFile {
  path: string;
}

class ImportRun {
  readonly summary: ImportSummary;
  private pending: EnvCandidate[] = [];
  private consumed = new Set<string>();
  private skippedPaths = new Set<string>();
  private checksums = new Map<string, string>();
  private validation = new Map<string, string>();
  private envMemory: EnvMemoryFile[] = [];
  private visited = new Set<string>();
  private lastPath = '';
  private logBuf = '';
  private logFd: number | null = null;

  /** Appends what is buffered to the skipped log; a log that cannot be written is given up, not the import. */
  flushSkippedLog(): void {
    const file = this.opts.skippedLog;
    if (!file || !this.logBuf) return;
    try {
      if (this.logFd === null) {
        mkdirSync(dirname(file), { recursive: true });
        this.logFd = openSync(file, 'w');
        this.summary.skippedLog = file;
      }
      writeSync(this.logFd, this.logBuf);
    } catch {
      this.opts.skippedLog = undefined;
      delete this.summary.skippedLog;
    }
    this.logBuf = '';
  }

  closeSkippedLog(): void {
    this.flushSkippedLog();
    if (this.logFd !== null) closeSync(this.logFd);
    this.logFd = null;
  }

  /** Real paths of the folders the user chose (a chosen file contributes its folder). */
  private roots: string[] = [];
  private readonly batchSize: number;
  private readonly maxBytes: number;
  private readonly started = Date.now();

  constructor(
    private db: Db,
    paths: string[],
    private opts: ImportOptions,
  ) {
    this.batchSize = opts.batchSize ?? 250;
    this.maxBytes = opts.maxSourceBytes ?? DEFAULT_MAX_SOURCE_BYTES;
    this.summary = {
      paths,
      files: 0,
      imported: 0,
      unchanged: 0,
      updated: 0,
      statsAttached: 0,
      skipped: [],
      skippedTotal: 0,
      skippedByReason: {},
      flagged: [],
      cancelled: false,
      durationMs: 0,
    };
  }

  /** Files are reported once even when two layouts name them; see skipLine for records inside a file. */
  skip(path: string, reason: string): void {
    if (this.skippedPaths.has(path)) return;
    this.skippedPaths.add(path);
    this.count(path, reason);
  }

  /** A line of a JSONL file: unique by construction, so it is counted without remembering its path. */
  private skipLine(where: string, reason: string): void {
    this.count(where, reason);
  }

  private count(path: string, reason: string): void {
    const s = this.summary;
    s.skippedTotal++;
    if (this.opts.skippedLog) {
      this.logBuf += `${JSON.stringify({ path, reason })}\n`;
      if (this.logBuf.length > 1 << 16) this.flushSkippedLog();
    }
    const kind = reasonKind(reason);
    s.skippedByReason[kind] = (s.skippedByReason[kind] ?? 0) + 1;
    if (s.skipped.length < SKIPPED_EXAMPLES) s.skipped.push({ path, reason });
  }

  /** Whether a path (after links) lies inside one of the chosen folders; always true when following links. */
  private inside(path: string): boolean {
    if (this.opts.followLinks) return true;
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      return true; // missing: the caller reports that, and nothing outside can be read through it
    }
    return this.roots.some((r) => real === r || real.startsWith(r.endsWith(sep) ? r : r + sep));
  }

  /** Refuses a path outside the roots, saying where it leads; true when refused. */
  private refuseOutside(path: string): boolean {
    if (this.inside(path)) return false;
    let target = path;
    try {
      target = realpathSync(path);
    } catch {
      // keep the path as given
    }
    this.consumed.add(path);
    this.skip(path, `${NOT_FOLLOWED} (leads to ${target})`);
    return true;
  }

  progress(phase: ImportProgress['phase']): void {
    const s = this.summary;
    this.opts.onProgress?.({
      phase,
      files: s.files,
      imported: s.imported,
      unchanged: s.unchanged,
      updated: s.updated,
      skipped: s.skippedTotal,
      ...(this.lastPath ? { currentPath: this.lastPath } : {}),
    });
  }

  private checkCancel(): void {
    if (this.opts.signal?.aborted) throw new Cancelled();
  }

  async add(c: EnvCandidate): Promise<void> {
    // A hint from any source (a companion file, a manifest, a JSONL line) over the library's limit:
    // the environment comes in, the hint is reported skipped (ingest would refuse it).
    const big = c.hint ? hintTooLarge(c.hint) : null;
    if (big) {
      this.skipLine(`${c.path} (hint)`, big);
      delete c.hint;
    }
    if (this.opts.runId && !c.run) c.run = this.opts.runId;
    if (this.opts.jobId) c.jobId = this.opts.jobId;
    if ((c.rolloutStep === undefined || c.rolloutStep === null) && this.opts.rolloutStep !== undefined) c.rolloutStep = this.opts.rolloutStep;
    this.pending.push(c);
    this.lastPath = c.path;
    if (this.pending.length >= this.batchSize) await this.flush();
  }

  private syntax: PythonSyntaxChecker | null = null;
  private syntaxOff = false;

  /** Flags the batch's new sources that do not compile (see ImportOptions.checkSyntax). */
  private async flagSyntaxErrors(batch: EnvCandidate[]): Promise<void> {
    if (this.opts.checkSyntax === false || this.syntaxOff) return;
    const fresh = batch.filter((c) => !c.rejected && envIdOfHash(this.db, sha256(c.source)) === null);
    if (!fresh.length) return;
    this.syntax ??= new PythonSyntaxChecker();
    try {
      const results = await Promise.all(fresh.map((c) => this.syntax!.check(c.source)));
      fresh.forEach((c, i) => {
        const d = results[i]![0];
        if (!d) return;
        c.flags = [...(c.flags ?? []), 'syntax_error'];
        const guessed = [c.skill ? `skill ${c.skill}` : null, c.rolloutStep !== undefined && c.rolloutStep !== null ? `step ${c.rolloutStep}` : null].filter(Boolean).join(', ');
        this.summary.flagged.push({
          path: c.path,
          flag: 'syntax_error',
          detail: `line ${d.line}: ${d.message}; SPADE would reject it when loading${guessed ? ` (${guessed} come from the file name only)` : ''}`,
        });
      });
    } catch {
      // No usable python3 here: import without the check rather than fail the import.
      this.syntaxOff = true;
    }
  }

  closeSyntax(): void {
    this.syntax?.close();
    this.syntax = null;
  }

  async flush(): Promise<void> {
    this.checkCancel();
    if (this.pending.length) {
      const batch = this.pending;
      this.pending = [];
      await this.flagSyntaxErrors(batch);
      const now = new Date().toISOString();
      this.db.transaction(() => {
        for (const c of batch) this.summary[ingest(this.db, c, now)]++;
      }).immediate();
    }
    this.progress('importing');
    // Lets the event loop breathe between batches (the web host keeps answering while we import).
    await new Promise((r) => setImmediate(r));
    this.checkCancel();
  }

  async run(paths: string[]): Promise<void> {
    this.progress('scanning');
    for (const p of paths) {
      try {
        const real = realpathSync(resolve(p));
        this.roots.push(statSync(real).isDirectory() ? real : dirname(real));
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
        this.skip(abs, gone ? 'no such file or folder' : errReason(e));
        continue;
      }
      if (st.isDirectory()) await this.walkDir(abs);
      else if (st.isFile()) await this.importFile(abs);
      else this.skip(abs, 'not a regular file or folder');
    }
    await this.flush();
    await this.applyEnvMemory();
    // The job's log named each game's two returns ([REGRET] lines): they attach to the games it brought back.
    if (this.opts.jobId) this.summary.statsAttached += attachRunReturns(this.db, this.opts.jobId);
  }

  private async walkDir(dir: string): Promise<void> {
    this.checkCancel();
    let real: string;
    let entries: Dirent[];
    try {
      real = realpathSync(dir);
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      this.skip(dir, errReason(e));
      return;
    }
    if (this.visited.has(real)) {
      this.skip(dir, `folder already visited as ${real} (symlink cycle)`);
      return;
    }
    this.visited.add(real);
    const names = new Set(entries.map((e) => e.name));
    if (names.has('checksums.sha256')) this.loadChecksums(join(dir, 'checksums.sha256'));
    if (names.has('validation_manifest.jsonl')) await this.loadValidation(join(dir, 'validation_manifest.jsonl'));
    if (names.has('manifest.jsonl')) await this.importPoolManifest(join(dir, 'manifest.jsonl'));
    if (names.has('manifest.json')) await this.importToolManifest(join(dir, 'manifest.json'));
    for (const n of KNOWN_COMPANIONS) if (names.has(n)) this.consumed.add(join(dir, n));

    // Programs first so their hint/spec/reason companions are claimed before strays are reported.
    const rank = (n: string) => (n.endsWith('.py') ? 0 : n.endsWith('.jsonl') ? 1 : 2);
    const sorted = [...entries].sort((a, b) => rank(a.name) - rank(b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: string[] = [];
    for (const ent of sorted) {
      const path = join(dir, ent.name);
      if (this.consumed.has(path)) continue;
      let isDir = ent.isDirectory();
      let isFile = ent.isFile();
      if (ent.isSymbolicLink()) {
        if (this.refuseOutside(path)) continue;
        try {
          const st = statSync(path);
          isDir = st.isDirectory();
          isFile = st.isFile();
        } catch (e) {
          this.skip(path, errReason(e) === 'missing (broken link or removed during import)' ? 'broken symlink' : errReason(e));
          continue;
        }
      }
      if (isDir) {
        if (!IGNORED_DIRS.has(ent.name)) subdirs.push(path);
      } else if (isFile) await this.importFile(path);
      else this.skip(path, 'not a regular file (device, socket or pipe)');
    }
    for (const sub of subdirs) await this.walkDir(sub);
  }

  private async importFile(path: string): Promise<void> {
    if (this.consumed.has(path)) return;
    const name = basename(path);
    if (name.endsWith('.py')) return this.importPy(path, {});
    if (name === 'env_memory.json') {
      this.consumed.add(path);
      this.envMemory.push({ path });
      return;
    }
    if (name === 'manifest.jsonl') return this.importPoolManifest(path);
    if (name === 'manifest.json') return this.importToolManifest(path);
    if (name === 'checksums.sha256') return this.loadChecksums(path);
    if (name.endsWith('.jsonl')) return this.importJsonl(path);
    this.consumed.add(path);
    if (KNOWN_COMPANIONS.has(name) || DOC_FILES.test(name)) return;
    if (name.endsWith('_hint.txt')) return this.skip(path, `hint without its game (${name.slice(0, -'_hint.txt'.length)}.py is not beside it)`);
    if (name.endsWith('.reason.txt')) return this.skip(path, 'rejection reason without its game file');
    this.skip(path, `not an environment file (${extname(name) || 'no extension'})`);
  }

  /**
   * Reads a small companion text file; problems are reported and the game still imports. Hints and
   * reasons are kept verbatim (SPADE shows the hint to the agent whitespace included).
   */
  private readCompanion(path: string, limit = 1024 * 1024): string | null {
    if (!existsSync(path)) return null;
    if (this.refuseOutside(path)) return null;
    this.consumed.add(path);
    try {
      const buf = readFileSync(path);
      if (buf.length === 0) return null;
      const c = decodeSource(buf, limit);
      if (!c.ok) {
        this.skip(path, c.reason);
        return null;
      }
      return c.text;
    } catch (e) {
      this.skip(path, errReason(e));
      return null;
    }
  }

  private async importPy(path: string, extra: Partial<EnvCandidate>): Promise<void> {
    if (this.refuseOutside(path)) return;
    this.consumed.add(path);
    this.summary.files++;
    let buf: Buffer;
    try {
      const st = statSync(path);
      if (!st.isFile()) return this.skip(path, 'not a regular file');
      if (st.size > this.maxBytes) return this.skip(path, `too large (${st.size} bytes; the limit is ${this.maxBytes})`);
      buf = readFileSync(path);
    } catch (e) {
      return this.skip(path, errReason(e));
    }
    const text = decodeSource(buf, this.maxBytes);
    if (!text.ok) return this.skip(path, text.reason);
    const dir = dirname(path);
    const stem = basename(path, '.py');
    let c: EnvCandidate = { source: text.text, path, fileStem: stem };

    const game = parseGameStem(stem);
    if (game) {
      if (game.skill) c.skill = game.skill;
      c.rolloutStep = game.rollout;
    }
    const stepFromPath = rolloutFromPath(dir);
    if (stepFromPath !== null) c.rolloutStep = stepFromPath;

    const specPath = join(dir, `${stem}.json`);
    if (existsSync(specPath) && !this.refuseOutside(specPath)) {
      this.consumed.add(specPath);
      try {
        const spec = JSON.parse(readFileSync(specPath, 'utf8')) as unknown;
        if (spec && typeof spec === 'object' && !Array.isArray(spec)) {
          const fields = fieldsFromRecord(spec as Record<string, unknown>);
          c = merge(c, { ...fields, meta: { spec } });
        } else this.skip(specPath, 'spec is not a JSON object');
      } catch (e) {
        this.skip(specPath, `broken JSON: ${errReason(e)}`);
      }
    }
    const hint = this.readCompanion(join(dir, `${stem}_hint.txt`), MAX_HINT_BYTES);
    if (hint) c.hint = hint;

    const rejectedFolder = /[\\/](spade_games_rejected|rejected)[\\/]/.test(path);
    const rej = parseRejectedStem(stem);
    // `# REJECTED (attempt N): <error>` marks a rejected game whatever its name or folder.
    const header = parseRejectedHeader(text.text);
    if ((rej && (rejectedFolder || stem.startsWith('reject_') || stem.startsWith('rej_'))) || header?.attempt != null) {
      const reason = this.readCompanion(join(dir, `${stem}.reason.txt`)) ?? this.readCompanion(join(dir, `${stem}.py.reason.txt`)) ?? header?.error ?? null;
      c.rejected = { stage: rej?.stage ?? header?.stage ?? null, reason };
      if (rej?.skill) c.skill = rej.skill;
      if (rej && rej.rollout !== null) c.rolloutStep = rej.rollout;
      const attempt = header?.attempt ?? rej?.attempt ?? null;
      if (attempt !== null) c.meta = { ...(c.meta ?? {}), rejection_attempt: attempt };
    }
    c = merge(c, extra);

    if (!c.rejected && !findClassName(c.source)) {
      return this.skip(path, 'no class whose name ends in Env (SPADE would not load it)');
    }
    const expected = this.checksums.get(path);
    if (expected !== undefined) {
      const actual = sha256(buf);
      if (actual !== expected) {
        c.flags = [...(c.flags ?? []), 'checksum_mismatch'];
        this.summary.flagged.push({ path, flag: 'checksum_mismatch', detail: `checksums.sha256 says ${expected.slice(0, 12)}…, the file hashes to ${actual.slice(0, 12)}…` });
      }
    }
    const v = this.validation.get(path);
    if (v && !c.validation) c.validation = v;
    await this.add(c);
  }

  private loadChecksums(path: string): void {
    if (this.consumed.has(path) && this.checksums.size) return;
    this.consumed.add(path);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      return this.skip(path, errReason(e));
    }
    const dir = dirname(path);
    let bad = 0;
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      const m = /^([0-9a-fA-F]{64}) [ *](.+)$/.exec(line.trimEnd());
      if (!m) {
        bad++;
        continue;
      }
      const file = resolve(dir, m[2]!);
      if (!this.inside(dirname(file))) continue; // never even probe for files outside the chosen folders
      this.checksums.set(file, m[1]!.toLowerCase());
      if (!existsSync(file)) this.skip(file, 'listed in checksums.sha256 but missing');
    }
    if (bad) this.summary.flagged.push({ path, flag: 'malformed_checksums', detail: `${bad} line(s) are not in sha256sum format` });
  }

  private async *jsonRecords(path: string): AsyncGenerator<{ where: string; n: number; rec: Record<string, unknown> }> {
    // A line holds a source and a hint at their limits, JSON-escaped (\u0001 is six bytes for one).
    const lineLimit = 6 * (this.maxBytes + MAX_HINT_BYTES) + 65_536;
    for await (const { n, bytes } of readLines(path, lineLimit)) {
      const where = `${path}:${n}`;
      if (bytes === null) {
        this.skipLine(where, `line too long (over ${lineLimit} bytes)`);
        continue;
      }
      let line: string;
      try {
        line = utf8.decode(bytes);
      } catch {
        this.skipLine(where, 'not valid UTF-8');
        continue;
      }
      if (!line.trim()) continue;
      let rec: unknown;
      try {
        rec = JSON.parse(line);
      } catch (e) {
        this.skipLine(where, `broken JSON: ${errReason(e)}`);
        continue;
      }
      if (!rec || typeof rec !== 'object' || Array.isArray(rec)) {
        this.skipLine(where, 'not a JSON object');
        continue;
      }
      yield { where, n, rec: rec as Record<string, unknown> };
    }
  }

  private async loadValidation(path: string): Promise<void> {
    this.consumed.add(path);
    const dir = dirname(path);
    try {
      for await (const { rec } of this.jsonRecords(path)) {
        const file = entryFile(rec);
        const v = fieldsFromRecord(rec).validation;
        if (file && v) {
          this.validation.set(resolve(dir, file), v);
          this.validation.set(resolve(dir, 'games', basename(file)), v);
        }
      }
    } catch (e) {
      this.skip(path, errReason(e));
    }
  }

  private async importJsonl(path: string): Promise<void> {
    this.consumed.add(path);
    this.summary.files++;
    let sawCode = false;
    let first = true;
    try {
      for await (const { where, rec } of this.jsonRecords(path)) {
        const code = typeof rec.code === 'string' ? rec.code : null;
        if (code === null) {
          if (first && !sawCode) {
            this.skip(path, 'not an environment JSONL (the first record has no "code" string)');
            return;
          }
          this.skipLine(where, 'no "code" string');
          continue;
        }
        first = false;
        sawCode = true;
        const check = decodeSource(Buffer.from(code), this.maxBytes);
        if (!check.ok) {
          this.skipLine(where, check.reason);
          continue;
        }
        await this.add(merge({ source: code, path: where }, fieldsFromRecord(rec)));
      }
    } catch (e) {
      if (e instanceof Cancelled) throw e;
      this.skip(path, errReason(e));
    }
  }

  /** Static pool: manifest.jsonl names the game files (often under games/) and carries their fields. */
  private async importPoolManifest(path: string): Promise<void> {
    if (this.consumed.has(path)) return;
    this.consumed.add(path);
    const dir = dirname(path);
    try {
      for await (const { where, rec } of this.jsonRecords(path)) {
        const file = entryFile(rec);
        if (!file) {
          this.skipLine(where, 'manifest entry names no file');
          continue;
        }
        let abs = resolve(dir, file);
        if (!this.inside(dirname(abs)) || (existsSync(abs) && this.refuseOutside(abs))) {
          if (!this.inside(dirname(abs))) this.skipLine(where, `${NOT_FOLLOWED} (names ${file})`);
          continue;
        }
        if (!existsSync(abs) && existsSync(resolve(dir, 'games', basename(file)))) abs = resolve(dir, 'games', basename(file));
        if (!existsSync(abs)) {
          this.consumed.add(abs);
          this.skip(abs, `named in ${basename(path)} but missing`);
          continue;
        }
        if (this.consumed.has(abs)) continue;
        await this.importPy(abs, fieldsFromRecord(rec));
      }
    } catch (e) {
      if (e instanceof Cancelled) throw e;
      this.skip(path, errReason(e));
    }
  }

  /** Tool-use release: manifest.json lists entries, one `.py` each; every field is kept. */
  private async importToolManifest(path: string): Promise<void> {
    if (this.consumed.has(path)) return;
    this.consumed.add(path);
    const dir = dirname(path);
    let doc: unknown;
    try {
      if (statSync(path).size > MAX_JSON_BYTES) return this.skip(path, 'manifest too large');
      doc = JSON.parse(readFileSync(path, 'utf8'));
    } catch (e) {
      return this.skip(path, `broken JSON: ${errReason(e)}`);
    }
    let entries: Record<string, unknown>[] = [];
    const asEntries = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x)) : null);
    if (Array.isArray(doc)) entries = asEntries(doc)!;
    else if (doc && typeof doc === 'object') {
      const o = doc as Record<string, unknown>;
      const list = ['environments', 'envs', 'entries', 'items', 'games'].map((k) => asEntries(o[k])).find((x) => x && x.length);
      if (list) entries = list;
      else {
        // {"name": {...fields}} maps are also seen; the key is the environment's name.
        const vals = Object.entries(o).filter(([, v]) => v && typeof v === 'object' && !Array.isArray(v));
        entries = vals.map(([k, v]) => ({ name: k, ...(v as Record<string, unknown>) }));
      }
    }
    entries = entries.filter((e) => entryFile(e) || (typeof e.name === 'string' && existsSync(join(dir, `${e.name}.py`))));
    if (!entries.length) return this.skip(path, 'manifest.json lists no environment files');
    for (const [i, e] of entries.entries()) {
      const file = entryFile(e) ?? `${e.name as string}.py`;
      const abs = resolve(dir, file);
      if (!this.inside(dirname(abs))) {
        this.skipLine(`${path}#${i + 1}`, `${NOT_FOLLOWED} (names ${file})`);
        continue;
      }
      if (!existsSync(abs)) {
        this.consumed.add(abs);
        this.skip(abs, `named in manifest.json (entry ${i + 1}) but missing`);
        continue;
      }
      if (this.consumed.has(abs)) continue;
      const fields = fieldsFromRecord(e);
      // The release names environments by slug; the class name is the better display name.
      delete fields.name;
      // A release's entry is kept whole (an export writes it back); one our export made up for an
      // environment that had none is not the environment's: keeping it would be a change.
      const own = e[MANIFEST_FROM] === 'workbench';
      await this.importPy(abs, { kind: 'tool-use', ...fields, meta: { ...(fields.meta ?? {}), ...(own ? {} : { manifest: e }) } });
    }
  }

  /**
   * The environment an env_memory.json record is about, looked for within its own run: SPADE names
   * games `game_{rollout}_{index}_{skill}` in every run, so a file name is matched only among the
   * files this job brought back, then under this env_memory.json's output folder (the record's own
   * path first), and otherwise by the code (the whole source, or SPADE's first-2,000-characters
   * snippet of it). Never by name across the library: that landed records on other runs' games.
   */
  private envForRecord(file: string | null, snippet: unknown, memoryPath: string): number | null {
    const name = file ? basename(file) : null;
    if (name) {
      if (this.opts.jobId) {
        const inJob = envIdInJob(this.db, this.opts.jobId, name);
        if (inJob !== null) return inJob;
      }
      const inFolder = envIdUnderFolder(this.db, runFolderOf(memoryPath), name, file);
      if (inFolder !== null) return inFolder;
    }
    if (typeof snippet !== 'string' || snippet.trim().length < 40) return null;
    const whole = envIdOfHash(this.db, sha256(snippet));
    if (whole !== null) return whole;
    if (snippet.length < 2000) return null;
    return envIdBySourcePrefix(this.db, snippet);
  }

  private async applyEnvMemory(): Promise<void> {
    if (!this.envMemory.length) return;
    this.progress('stats');
    for (const { path } of this.envMemory) {
      let doc: unknown;
      try {
        if (statSync(path).size > MAX_JSON_BYTES) {
          this.skip(path, 'too large');
          continue;
        }
        doc = JSON.parse(readFileSync(path, 'utf8'));
      } catch (e) {
        this.skip(path, `broken JSON: ${errReason(e)}`);
        continue;
      }
      const records = Array.isArray(doc) ? doc : doc && typeof doc === 'object' ? ((doc as Record<string, unknown>).records ?? (doc as Record<string, unknown>).memory) : null;
      if (!Array.isArray(records)) {
        this.skip(path, 'env_memory.json is not a list of records');
        continue;
      }
      this.summary.files++;
      const placeholder = this.opts.regretPlaceholder ?? allZeroRegret(records);
      this.db.transaction(() => {
        records.forEach((rec: unknown, i) => {
          const where = `${path}#${i + 1}`;
          if (!rec || typeof rec !== 'object') return this.skipLine(where, 'not a JSON object');
          const r = rec as Record<string, unknown>;
          const file = typeof r.game_file === 'string' ? r.game_file : entryFile(r);
          const envId = this.envForRecord(file, r.code_snippet, path);
          if (envId === null) return this.skipLine(`${where} (${file ?? 'no game_file'})`, 'names a game that is not in the library');
          const meta = r.metadata && typeof r.metadata === 'object' ? (r.metadata as Record<string, unknown>) : {};
          // Our exporter writes SPADE's defaults where a value was unknown and lists them here.
          const unknown = new Set(Array.isArray(meta.workbench_unknown) ? meta.workbench_unknown : []);
          const stats: EnvStats = {
            winRate: numOrNull(r.actor_win_rate) ?? numOrNull(r.win_rate),
            regret: unknown.has('regret') || placeholder ? null : (numOrNull(r.regret) ?? numOrNull(meta.regret)),
            rHint: numOrNull(r.r_hint) ?? numOrNull(meta.r_hint),
            rNoHint: numOrNull(r.r_no_hint) ?? numOrNull(meta.r_no_hint),
          };
          if (attachStats(this.db, envId, stats, { rolloutStep: unknown.has('rollout_id') ? null : numOrNull(r.rollout_id), skill: normaliseSkill(r.skill) })) this.summary.statsAttached++;
        });
      }).immediate();
      await new Promise((r) => setImmediate(r));
      this.checkCancel();
    }
  }

  finish(): ImportSummary {
    this.summary.durationMs = Date.now() - this.started;
    return this.summary;
  }
}

export async function importPaths(db: Db, paths: string[], opts: ImportOptions = {}): Promise<ImportSummary> {
  const run = new ImportRun(db, paths, opts);
  try {
    await run.run(paths);
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
