import type { Db } from './db';
import { stmt } from './statements';
import { parseQuery } from './query';

export interface Snippet {
  id: number;
  field: 'name' | 'code' | 'hint' | 'notes';
  /** 1-based line in that field. */
  line: number;
  /** The line, trimmed to about `width` characters around the first match. */
  text: string;
  /** Where the match is in `text` (for highlighting). */
  start: number;
  end: number;
}

/** The words of a search, as the full-text index splits them (letters, digits, _). */
function words(query: string): string[] {
  return (query.match(/[\p{L}\p{N}_]+/gu) ?? []).map((w) => w.toLowerCase());
}

/**
 * Where each found environment matches the search: the first line of its name, code, hint or
 * notes holding one of the words. The index is contentless (it cannot say), so the text is read
 * from the head version, only for the rows on screen.
 */
export function searchSnippets(db: Db, query: string, ids: number[], width = 90): Snippet[] {
  // Only the query's text is looked for: an operator (`sort:blend`, `tag:x`) selects or orders, and
  // its letters are no match (they lit up `sort` in every game's code). A query the language
  // refuses has no snippets; the search itself says why.
  let text: string;
  try {
    text = parseQuery(query).match ?? '';
  } catch {
    return [];
  }
  const ws = words(text);
  if (!ws.length || !ids.length) return [];
  const q = stmt(
    db,
    `SELECT e.id, e.name, e.notes, v.source,
            COALESCE((SELECT h.text FROM hints h WHERE h.env_id = e.id ORDER BY h.id DESC LIMIT 1), '') AS hint
       FROM environments e JOIN versions v ON v.hash = e.head_hash WHERE e.id = ?`,
  );
  const out: Snippet[] = [];
  for (const id of ids) {
    const r = q.get(id) as { id: number; name: string; notes: string; source: string; hint: string } | undefined;
    if (!r) continue;
    let found: Snippet | null = null;
    for (const field of ['code', 'hint', 'notes', 'name'] as const) {
      const lines = r[field === 'code' ? 'source' : field].split('\n');
      for (let i = 0; i < lines.length && !found; i++) {
        const lower = lines[i]!.toLowerCase();
        let at = -1;
        let len = 0;
        for (const w of ws) {
          const k = lower.indexOf(w);
          if (k >= 0 && (at < 0 || k < at)) {
            at = k;
            len = w.length;
          }
        }
        if (at < 0) continue;
        const line = lines[i]!;
        const lead = line.length - line.trimStart().length;
        const from = Math.max(lead, at - Math.floor((width - len) / 2));
        const text = line.slice(from, from + width).trimEnd();
        found = { id, field, line: i + 1, text, start: at - from, end: at - from + len };
      }
      if (found) break;
    }
    if (found) out.push(found);
  }
  return out;
}
