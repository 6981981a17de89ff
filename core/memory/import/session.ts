/**
 * One import in progress (core/memory/importer.ts starts it): what it was asked, what it has seen and
 * skipped, the batch waiting to be stored, and the checks every layout's environments go through
 * (chosen folders only, size limits, hint limit, syntax). The layouts (games.ts, staticPool.ts,
 * toolRelease.ts, envMemory.ts, jsonl.ts) read their files and hand candidates to `add`.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, realpathSync, writeSync } from 'node:fs';
import { dirname, sep } from 'node:path';
import type { ImportProgress, ImportSummary } from '../../api';
import { SKIPPED_EXAMPLES } from '../../api/calls/memory';
import { hintTooLarge, MAX_HINT_BYTES, MAX_SOURCE_BYTES } from '../../api/limits';
import type { Db } from '../db';
import { decodeSource, sha256 } from '../parse';
import { envIdOfHash, ingest, type EnvCandidate } from '../repository';
import { PythonSyntaxChecker } from '../../runtime/pythonSyntax';
import { errReason, readLines, reasonKind } from './records';

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
export const MAX_JSON_BYTES = 256 * 1024 * 1024;

export class Cancelled extends Error {}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export interface EnvMemoryFile {
  path: string;
}

export class ImportSession {
  readonly summary: ImportSummary;
  private pending: EnvCandidate[] = [];
  readonly consumed = new Set<string>();
  private skippedPaths = new Set<string>();
  readonly checksums = new Map<string, string>();
  readonly validation = new Map<string, string>();
  readonly envMemory: EnvMemoryFile[] = [];
  readonly visited = new Set<string>();
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
  readonly roots: string[] = [];
  private readonly batchSize: number;
  readonly maxBytes: number;
  private readonly started = Date.now();

  constructor(
    readonly db: Db,
    paths: string[],
    readonly opts: ImportOptions,
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
  skipLine(where: string, reason: string): void {
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
  inside(path: string): boolean {
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
  refuseOutside(path: string): boolean {
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

  checkCancel(): void {
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

  /**
   * Reads a small companion text file; problems are reported and the game still imports. Hints and
   * reasons are kept verbatim (SPADE shows the hint to the agent whitespace included).
   */
  readCompanion(path: string, limit = 1024 * 1024): string | null {
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

  async *jsonRecords(path: string): AsyncGenerator<{ where: string; n: number; rec: Record<string, unknown> }> {
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

  finish(): ImportSummary {
    this.summary.durationMs = Date.now() - this.started;
    return this.summary;
  }
}
