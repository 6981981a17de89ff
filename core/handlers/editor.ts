import type { Diagnostic, Draft, LoadCheck } from '../api/calls/editor';
import { PythonSyntaxChecker } from '../editor/pythonSyntax';
import { quickLoadCheck } from '../editor/loadCheck';
import type { Db } from '../memory/db';
import { sha256 } from '../memory/parse';
import { addVersion, currentHint, getEnvironment, getVersion, ingest, listVersions, updateEnvironment } from '../memory/repository';
import { stmt } from '../memory/statements';
import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';
import { DomainError } from '../errors';

type EditorCalls =
  | 'editor.open'
  | 'editor.drafts'
  | 'editor.draftSave'
  | 'editor.draftDiscard'
  | 'editor.save'
  | 'editor.revert'
  | 'editor.versions'
  | 'editor.diff'
  | 'editor.create'
  | 'editor.fork'
  | 'editor.checkSyntax'
  | 'editor.checkLoad';

interface DraftRow {
  env_id: number;
  base_hash: string | null;
  source: string;
  hint: string | null;
  updated_at: string;
}

export function loadDraft(db: Db, envId: number): Draft | null {
  const r = stmt(db, 'SELECT env_id, base_hash, source, hint, updated_at FROM drafts WHERE env_id = ?').get(envId) as DraftRow | undefined;
  return r ? { envId: r.env_id, baseHash: r.base_hash, source: r.source, hint: r.hint, updatedAt: r.updated_at } : null;
}

function headOf(db: Db, envId: number): string {
  const r = stmt(db, 'SELECT head_hash FROM environments WHERE id = ?').get(envId) as { head_hash: string } | undefined;
  if (!r) throw new DomainError('not_found', `No environment ${envId}`);
  return r.head_hash;
}

function versionOf(db: Db, envId: number, hash: string) {
  const v = getVersion(db, hash);
  if (!v || v.envId !== envId) throw new DomainError('not_found', `Version ${hash.slice(0, 12)} is not a version of environment ${envId}`);
  return v;
}

const checkers = new WeakMap<Services, PythonSyntaxChecker>();
function syntaxChecker(s: Services): PythonSyntaxChecker {
  let c = checkers.get(s);
  if (!c) {
    const made = new PythonSyntaxChecker();
    checkers.set(s, made);
    s.onClose(() => made.close());
    c = made;
  }
  return c;
}

/** A source already stored belongs to exactly one environment (versions are content-addressed). */
function refuseKnownSource(db: Db, source: string): void {
  const known = stmt(db, 'SELECT env_id FROM versions WHERE hash = ?').get(sha256(source)) as { env_id: number } | undefined;
  if (known) throw new DomainError('conflict', `This exact source is already environment ${known.env_id}; open that one instead`, { envId: known.env_id });
}

function createEnv(
  db: Db,
  source: string,
  opts: { name?: string; kind?: 'game' | 'tool-use'; skill?: string | null; hint?: string | null; path: string; message: string; tags?: string[]; meta?: Record<string, unknown> },
): { envId: number; hash: string } {
  return db.transaction(() => {
    refuseKnownSource(db, source);
    const now = new Date().toISOString();
    ingest(db, { source, path: opts.path, name: opts.name ?? null, kind: opts.kind ?? null, skill: opts.skill ?? null, hint: opts.hint ?? null, tags: opts.tags, meta: opts.meta }, now);
    const hash = sha256(source);
    const row = stmt(db, 'SELECT env_id FROM versions WHERE hash = ?').get(hash) as { env_id: number };
    stmt(db, 'UPDATE versions SET message = ? WHERE hash = ?').run(opts.message, hash);
    return { envId: row.env_id, hash };
  }).immediate();
}

export function editorHandlers(s: Services): Pick<Handlers, EditorCalls> {
  const db = s.db;
  const changed = (ids: number[], reason: string) => s.events.emit('memory.changed', { ids, reason });

  async function loadCheck(source: string): Promise<LoadCheck> {
    try {
      return await quickLoadCheck(s, source);
    } catch (e) {
      return { ran: false, ok: false, detail: `The loading checks could not run: ${e instanceof Error ? e.message : String(e)}`, diagnostics: [] };
    }
  }

  return {
    'editor.open': ({ envId }) => {
      const env = getEnvironment(db, envId);
      if (!env) throw new DomainError('not_found', `No environment ${envId}`);
      return { env, draft: loadDraft(db, envId) };
    },
    'editor.drafts': () =>
      (
        stmt(db, 'SELECT d.env_id, e.name, d.base_hash, d.updated_at FROM drafts d JOIN environments e ON e.id = d.env_id ORDER BY d.updated_at DESC').all() as {
          env_id: number;
          name: string;
          base_hash: string | null;
          updated_at: string;
        }[]
      ).map((r) => ({ envId: r.env_id, name: r.name, baseHash: r.base_hash, updatedAt: r.updated_at })),
    'editor.draftSave': ({ envId, baseHash, source, hint }) => {
      versionOf(db, envId, baseHash);
      const updatedAt = new Date().toISOString();
      stmt(
        db,
        `INSERT INTO drafts (env_id, base_hash, source, hint, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (env_id) DO UPDATE SET base_hash = excluded.base_hash, source = excluded.source, hint = excluded.hint, updated_at = excluded.updated_at`,
      ).run(envId, baseHash, source, hint, updatedAt);
      return { updatedAt };
    },
    'editor.draftDiscard': ({ envId }) => ({ discarded: stmt(db, 'DELETE FROM drafts WHERE env_id = ?').run(envId).changes > 0 }),
    'editor.save': async ({ envId, parentHash, source, hint, message, check }) => {
      const saved = db.transaction(() => {
        const r = addVersion(db, envId, source, parentHash, message);
        if (hint !== null && hint.trim() && hint.trim() !== (currentHint(db, envId) ?? '')) updateEnvironment(db, envId, { hint: hint.trim() });
        stmt(db, 'DELETE FROM drafts WHERE env_id = ?').run(envId);
        return r;
      }).immediate();
      changed([envId], 'edit');
      const result = check ? await loadCheck(source) : { ran: false, ok: true, detail: 'not requested', diagnostics: [] };
      return { ...saved, versions: listVersions(db, envId), check: result };
    },
    'editor.revert': ({ envId, hash }) => {
      const v = versionOf(db, envId, hash);
      const head = headOf(db, envId);
      if (head !== hash) addVersion(db, envId, v.source, head, `revert to ${hash.slice(0, 12)}`);
      changed([envId], 'revert');
      return { hash, versions: listVersions(db, envId) };
    },
    'editor.versions': ({ envId }) => ({ head: headOf(db, envId), versions: listVersions(db, envId) }),
    'editor.diff': ({ left, right }) => {
      const side = (x: { hash: string } | { draft: number }) => {
        if ('hash' in x) {
          const v = getVersion(db, x.hash);
          if (!v) throw new DomainError('not_found', `No version ${x.hash.slice(0, 12)}`);
          return { label: `${x.hash.slice(0, 10)}${v.message ? ` · ${v.message.slice(0, 60)}` : ''}`, source: v.source };
        }
        const d = loadDraft(db, x.draft);
        if (!d) throw new DomainError('not_found', `Environment ${x.draft} has no unsaved draft`);
        return { label: 'unsaved draft', source: d.source };
      };
      return { left: side(left), right: side(right) };
    },
    'editor.create': ({ source, name, kind, skill, hint, origin, fileName }) => {
      const path = origin === 'file' && fileName ? `file:${fileName}` : `editor:${origin}`;
      const message = origin === 'snippet' ? 'created from a snippet' : origin === 'file' ? `created from ${fileName ?? 'a file'}` : 'created from pasted text';
      const r = createEnv(db, source, { name, kind, skill: skill || null, hint: hint ?? null, path, message });
      changed([r.envId], 'create');
      return r;
    },
    'editor.fork': ({ envId, hash, source, name }) => {
      const env = getEnvironment(db, envId);
      if (!env) throw new DomainError('not_found', `No environment ${envId}`);
      const fromHash = hash ?? env.hash;
      let code = source ?? versionOf(db, envId, fromHash).source;
      // The same text cannot be two environments, so an unchanged fork records where it came from
      // in a trailing comment, which also keeps the lineage visible in the file itself.
      if (stmt(db, 'SELECT 1 FROM versions WHERE hash = ?').get(sha256(code))) {
        const sep = code.endsWith('\n') ? '' : '\n';
        code = `${code}${sep}# forked from ${env.name} (environment ${envId}, version ${fromHash.slice(0, 12)})\n`;
        if (stmt(db, 'SELECT 1 FROM versions WHERE hash = ?').get(sha256(code))) code = `${code}# fork made ${new Date().toISOString()}\n`;
      }
      const r = createEnv(db, code, {
        name: name ?? env.name,
        kind: env.kind,
        skill: env.skill,
        hint: env.hint,
        tags: env.tags,
        path: `fork:${envId}:${fromHash}`,
        message: `forked from environment ${envId} at ${fromHash.slice(0, 12)}`,
        meta: { forkedFrom: { envId, hash: fromHash } },
      });
      changed([r.envId], 'fork');
      return r;
    },
    'editor.checkSyntax': async ({ source }) => {
      const checker = syntaxChecker(s);
      let diagnostics: Diagnostic[];
      try {
        diagnostics = await checker.check(source);
      } catch (e) {
        throw new DomainError('unavailable', e instanceof Error ? e.message : String(e));
      }
      return { diagnostics, parser: checker.parserName };
    },
    'editor.checkLoad': ({ source }) => loadCheck(source),
  };
}
