/**
 * Wire audits kept (migration 21): every audit the app runs ("Audit over the wire") and the CLI's
 * `openenv-audit` with a data dir, listed per server URL, newest first. These are the workbench's
 * own checks over OpenEnv's protocol (core/openenv/wireAudit.ts, the wire.* ids), never SPADE's
 * audit of a program. A URL is kept and looked up without its `?token=` (a secret).
 */
import type { Db } from '../memory/db';
import { stmt } from '../memory/statements';
import { DomainError } from '../errors';
import { parseServerUrl } from './client';
import { publicUrl } from './remoteRun';
import { WIRE_CHECKS, type WireAudit } from './wireAudit';

export interface StoredWireAudit {
  id: number;
  url: string;
  serverName: string | null;
  serverVersion: string | null;
  verdict: WireAudit['verdict'];
  checks: WireAudit['checks'];
  elapsedMs: number;
  /** Who ran it: the app, or the CLI's openenv-audit. */
  source: 'app' | 'cli';
  createdAt: string;
}

interface Row {
  id: number;
  url: string;
  server_name: string | null;
  server_version: string | null;
  verdict: WireAudit['verdict'];
  checks: string;
  elapsed_ms: number;
  source: 'app' | 'cli';
  created_at: string;
}

/** The key a server's audits are kept under: its base URL as the client reads it, without a token. */
export function auditUrlKey(url: string): string {
  return publicUrl(parseServerUrl(url).href);
}

const MAX_CHECKS_JSON = 256 * 1024;

/** The checks as stored: each check's evidence is the server's words, so a huge one is cut rather than kept. */
function checksJson(checks: WireAudit['checks']): string {
  const text = JSON.stringify(checks);
  if (text.length <= MAX_CHECKS_JSON) return text;
  return JSON.stringify(checks.map((c) => ({ ...c, message: c.message.slice(0, 2000), evidence: { truncated: true } })));
}

function parseChecks(text: string): WireAudit['checks'] {
  try {
    const v = JSON.parse(text) as unknown;
    if (!Array.isArray(v)) return [];
    const known = new Set<string>(WIRE_CHECKS);
    return v.filter((c): c is WireAudit['checks'][number] => !!c && typeof c === 'object' && known.has((c as { id?: string }).id ?? ''));
  } catch {
    return [];
  }
}

export class WireAuditStore {
  constructor(private readonly db: Db) {}

  add(a: WireAudit, source: 'app' | 'cli', at = new Date()): StoredWireAudit {
    const url = auditUrlKey(a.url);
    const r = stmt(this.db, 'INSERT INTO wire_audits (url, server_name, server_version, verdict, checks, elapsed_ms, source, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
      url,
      a.server.name?.slice(0, 500) ?? null,
      a.server.version?.slice(0, 200) ?? null,
      a.verdict,
      checksJson(a.checks),
      a.elapsedMs,
      source,
      at.toISOString(),
    );
    return this.one(Number(r.lastInsertRowid));
  }

  private one(id: number): StoredWireAudit {
    const row = stmt(this.db, 'SELECT * FROM wire_audits WHERE id = ?').get(id) as Row | undefined;
    if (!row) throw new DomainError('not_found', `No wire audit ${id}`);
    return toAudit(row);
  }

  /** The audits of one server (its URL; a token in it is ignored), newest first. */
  list(url: string, limit = 20): StoredWireAudit[] {
    const rows = stmt(this.db, 'SELECT * FROM wire_audits WHERE url = ? ORDER BY created_at DESC, id DESC LIMIT ?').all(auditUrlKey(url), Math.max(1, Math.min(limit, 500))) as Row[];
    return rows.map(toAudit);
  }
}

function toAudit(r: Row): StoredWireAudit {
  return { id: r.id, url: r.url, serverName: r.server_name, serverVersion: r.server_version, verdict: r.verdict, checks: parseChecks(r.checks), elapsedMs: r.elapsed_ms, source: r.source, createdAt: r.created_at };
}
