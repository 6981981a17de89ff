/**
 * The editor feature: drafts, saving as a new version, revert, diff, creating and forking
 * environments, and the two checks (syntax in a CPython parser process it owns, SPADE's loading
 * checks in the sandboxed runtime). Handlers only translate the contract to these methods.
 */
import { errorMessage } from '../api';
import type { Diagnostic, Draft, LoadCheck } from '../api/calls/editor';
import type { EnvDetail, VersionInfo } from '../api';
import type { MemoryChange } from '../api/calls/memory';
import { DomainError } from '../errors';
import type { Db } from '../memory/db';
import { sha256 } from '../memory/parse';
import { addVersion, currentHint, getEnvironment, getVersion, ingest, listVersions, updateEnvironment } from '../memory/repository';
import type { AuditService } from '../audit/service';
import { quickLoadCheck } from './loadCheck';
import { previewWriteBack, writeBack } from './writeBack';
import { PythonSyntaxChecker } from '../runtime/pythonSyntax';
import { deleteDraft, envWithSource, headHash, listDrafts, loadDraft, saveDraft, setVersionMessage } from './repository';

export interface EditorServiceDeps {
  db: Db;
  /** Where SPADE's loading checks run: the audit's spade.* checks. */
  audit: () => AuditService;
  /** Environments changed (the library refreshes). */
  changed: (change: MemoryChange) => void;
}

type EnvKind = 'game' | 'tool-use';

interface NewEnv {
  name?: string | undefined;
  kind?: EnvKind | null | undefined;
  skill?: string | null | undefined;
  hint?: string | null | undefined;
  path: string;
  message: string;
  tags?: string[] | undefined;
  meta?: Record<string, unknown> | undefined;
}

/**
 * An unchanged fork would be the same text, which cannot be two environments (versions are
 * content-addressed), so it records where it came from in a trailing comment, which also keeps
 * the lineage visible in the file itself; `taken` says whether a text is already stored.
 */
export function forkSource(code: string, from: { name: string; envId: number; hash: string }, taken: (text: string) => boolean, now = new Date()): string {
  if (!taken(code)) return code;
  const sep = code.endsWith('\n') ? '' : '\n';
  let out = `${code}${sep}# forked from ${from.name} (environment ${from.envId}, version ${from.hash.slice(0, 12)})\n`;
  if (taken(out)) out = `${out}# fork made ${now.toISOString()}\n`;
  return out;
}

/** A Save whose checks were cancelled is still saved: it answers that the checks did not run. */
function cancelledCheck(e: unknown): LoadCheck {
  if (!(e instanceof DomainError) || e.code !== 'cancelled') throw e;
  return { ran: false, ok: false, detail: 'Cancelled: the loading checks did not run', diagnostics: [] };
}

export class EditorService {
  private checker: PythonSyntaxChecker | null = null;

  constructor(private readonly deps: EditorServiceDeps) {}

  private get db(): Db {
    return this.deps.db;
  }

  private head(envId: number): string {
    const h = headHash(this.db, envId);
    if (h === null) throw new DomainError('not_found', `No environment ${envId}`);
    return h;
  }

  private versionOf(envId: number, hash: string) {
    const v = getVersion(this.db, hash);
    if (!v || v.envId !== envId) throw new DomainError('not_found', `Version ${hash.slice(0, 12)} is not a version of environment ${envId}`);
    return v;
  }

  private envOrThrow(envId: number): EnvDetail {
    const env = getEnvironment(this.db, envId);
    if (!env) throw new DomainError('not_found', `No environment ${envId}`);
    return env;
  }

  open(envId: number): { env: EnvDetail; draft: Draft | null } {
    return { env: this.envOrThrow(envId), draft: loadDraft(this.db, envId) };
  }

  drafts() {
    return listDrafts(this.db);
  }

  saveDraft(d: { envId: number; baseHash: string; source: string; hint: string | null }): { updatedAt: string } {
    this.versionOf(d.envId, d.baseHash);
    const updatedAt = new Date().toISOString();
    saveDraft(this.db, { ...d, updatedAt });
    return { updatedAt };
  }

  discardDraft(envId: number): boolean {
    return deleteDraft(this.db, envId);
  }

  /** `requestId`: editor.checkLoadCancel with it stops the checks that follow the save; the version stays saved. */
  async save(i: { envId: number; parentHash: string; source: string; hint: string | null; message?: string | undefined; check?: boolean | undefined; requestId?: string | undefined }) {
    const db = this.db;
    const saved = db
      .transaction(() => {
        const r = addVersion(db, i.envId, i.source, i.parentHash, i.message);
        const hint = i.hint?.trim();
        if (hint && hint !== (currentHint(db, i.envId) ?? '')) updateEnvironment(db, i.envId, { hint });
        deleteDraft(db, i.envId);
        return r;
      })
      .immediate();
    this.deps.changed({ reason: 'edit', ids: [i.envId] });
    const check = i.check ? await this.loadCheck(i.source, i.requestId).catch((e: unknown) => cancelledCheck(e)) : { ran: false, ok: true, detail: 'not requested', diagnostics: [] };
    return { ...saved, versions: listVersions(db, i.envId), check };
  }

  revert(envId: number, hash: string): { hash: string; versions: VersionInfo[] } {
    const v = this.versionOf(envId, hash);
    const head = this.head(envId);
    if (head !== hash) addVersion(this.db, envId, v.source, head, `revert to ${hash.slice(0, 12)}`);
    this.deps.changed({ reason: 'revert', ids: [envId] });
    return { hash, versions: listVersions(this.db, envId) };
  }

  versions(envId: number): { head: string; versions: VersionInfo[] } {
    return { head: this.head(envId), versions: listVersions(this.db, envId) };
  }

  diffSide(x: { hash: string } | { draft: number }): { label: string; source: string } {
    if ('hash' in x) {
      const v = getVersion(this.db, x.hash);
      if (!v) throw new DomainError('not_found', `No version ${x.hash.slice(0, 12)}`);
      return { label: `${x.hash.slice(0, 10)}${v.message ? ` · ${v.message.slice(0, 60)}` : ''}`, source: v.source };
    }
    const d = loadDraft(this.db, x.draft);
    if (!d) throw new DomainError('not_found', `Environment ${x.draft} has no unsaved draft`);
    return { label: 'unsaved draft', source: d.source };
  }

  create(i: { source: string; name?: string | undefined; kind?: EnvKind | undefined; skill?: string | undefined; hint?: string | undefined; origin: 'snippet' | 'file' | 'paste'; fileName?: string | undefined }) {
    const path = i.origin === 'file' && i.fileName ? `file:${i.fileName}` : `editor:${i.origin}`;
    const message = i.origin === 'snippet' ? 'created from a snippet' : i.origin === 'file' ? `created from ${i.fileName ?? 'a file'}` : 'created from pasted text';
    const r = this.newEnv(i.source, { name: i.name, kind: i.kind, skill: i.skill || null, hint: i.hint ?? null, path, message });
    this.deps.changed({ reason: 'create', ids: [r.envId] });
    return r;
  }

  fork(i: { envId: number; hash?: string | undefined; source?: string | undefined; name?: string | undefined }) {
    const env = this.envOrThrow(i.envId);
    const fromHash = i.hash ?? env.hash;
    const base = i.source ?? this.versionOf(i.envId, fromHash).source;
    const code = forkSource(base, { name: env.name, envId: i.envId, hash: fromHash }, (t) => envWithSource(this.db, t) !== null);
    const r = this.newEnv(code, {
      name: i.name ?? env.name,
      kind: env.kind,
      skill: env.skill,
      hint: env.hint,
      tags: env.tags,
      path: `fork:${i.envId}:${fromHash}`,
      message: `forked from environment ${i.envId} at ${fromHash.slice(0, 12)}`,
      meta: { forkedFrom: { envId: i.envId, hash: fromHash } },
    });
    this.deps.changed({ reason: 'fork', ids: [r.envId] });
    return r;
  }

  /** A new environment from text no environment holds yet. */
  /** The diff a write-back of a version (the head by default) to its source file would make. */
  writeBackPreview(envId: number, hash?: string) {
    return previewWriteBack(this.deps.db, envId, hash);
  }

  /** Writes a version back to the file it came from, if that file is still what the preview showed. */
  writeBack(envId: number, opts: { hash?: string | undefined; expectedFileHash: string | null }) {
    return writeBack(this.deps.db, envId, { ...(opts.hash ? { hash: opts.hash } : {}), expectedFileHash: opts.expectedFileHash });
  }

  private newEnv(source: string, o: NewEnv): { envId: number; hash: string } {
    const db = this.db;
    return db
      .transaction(() => {
        const known = envWithSource(db, source);
        if (known !== null) throw new DomainError('conflict', `This exact source is already environment ${known}; open that one instead`, { envId: known });
        ingest(db, { source, path: o.path, name: o.name ?? null, kind: o.kind ?? null, skill: o.skill ?? null, hint: o.hint ?? null, tags: o.tags, meta: o.meta });
        const hash = sha256(source);
        setVersionMessage(db, hash, o.message);
        return { envId: envWithSource(db, source)!, hash };
      })
      .immediate();
  }

  async checkSyntax(source: string): Promise<{ diagnostics: Diagnostic[]; parser: string }> {
    this.checker ??= new PythonSyntaxChecker();
    try {
      return { diagnostics: await this.checker.check(source), parser: this.checker.parserName };
    } catch (e) {
      throw new DomainError('unavailable', errorMessage(e));
    }
  }

  /** Loading checks a person can cancel, by the id their caller chose. */
  private readonly checking = new Map<string, AbortController>();

  async loadCheck(source: string, requestId?: string): Promise<LoadCheck> {
    if (requestId !== undefined && this.checking.has(requestId)) throw new DomainError('conflict', `Loading checks ${requestId} are already running`);
    const control = new AbortController();
    if (requestId !== undefined) this.checking.set(requestId, control);
    try {
      const r = await quickLoadCheck(this.deps.audit(), source, control.signal);
      if (control.signal.aborted) throw new DomainError('cancelled', 'The loading checks were cancelled');
      return r;
    } catch (e) {
      if (control.signal.aborted) throw new DomainError('cancelled', 'The loading checks were cancelled');
      return { ran: false, ok: false, detail: `The loading checks could not run: ${errorMessage(e)}`, diagnostics: [] };
    } finally {
      if (requestId !== undefined) this.checking.delete(requestId);
    }
  }

  /** Cancel: the checks' interpreter is stopped (killed and replaced); false when none run under the id. */
  loadCheckCancel(requestId: string): boolean {
    const c = this.checking.get(requestId);
    if (!c) return false;
    c.abort();
    return true;
  }

  close(): void {
    this.checker?.close();
    this.checker = null;
  }
}
