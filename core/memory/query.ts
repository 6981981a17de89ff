/**
 * The one query language of every place that asks for a selection of environments: the Library's
 * search box, the Runs page's and Pool audit's Environments fields, the Design page's seeds search,
 * and the CLI's `search`, `play --selection`, `audit --pool`, `regret --pool`, `design --seeds-from`.
 * A query is words (full text, every one must appear) and operators, all of which must hold:
 *
 *   tag:NAME          tagged NAME (a curated set); several tags: every one
 *   skill:NAME        of that skill; several: any of them
 *   seed  /  is:seed  an environment marked seed (`"seed"`, quoted, is the word; the seed pack is `tag:seed`)
 *   is:rejected       a game SPADE rejected
 *   verdict:V         the head version's stored audit verdict (pass, warn, fail);
 *   verdict:CHECK=S   one check's status (`verdict:reset-leak=fail`)
 *   run:ID            seen in that run (a job id or an import's --run name)
 *   hash:PREFIX       a version hash (the head or any earlier version) starting with PREFIX
 *   sort:KEY[:asc|desc]  orders a search (the Library, `search`), not a selection: blend (SPADE's
 *                     designer reward of the measured numbers), regret, winrate, difficulty (measured),
 *                     recorded (regret a training run recorded), rating, name, created, updated.
 *                     Highest first (name: A first); a column header or --sort chosen besides wins
 *
 * A value may be quoted (`tag:"audit clean"`). A quoted text is a phrase; an unquoted word with
 * punctuation in it (`random.Random(seed)`) is one too, and must also appear as written (ignoring
 * case): FTS5's tokenizer drops punctuation, so `random.Random(seed)` alone would match every game
 * that uses `random` and `seed` anywhere. Unknown `key:` words are text (`self.x:` in code).
 * This module only parses; queryStore.ts turns the result into SQL.
 */
import { invalidInput } from '../errors';
import type { MemorySort } from '../api';

export interface ParsedQuery {
  /** The FTS5 MATCH expression of the text part, or null when the query has no words. */
  match: string | null;
  /** Substrings that must appear as written (case-insensitive) in name, code, hint or notes. */
  exact: string[];
  tags: string[];
  skills: string[];
  seed: boolean;
  rejected: boolean;
  verdicts: { checkId: string | null; status: 'pass' | 'warn' | 'fail' | 'skip' }[];
  runs: string[];
  hashes: string[];
  /** `sort:KEY`: how a search lists what it finds (selections ignore it); null when not given. */
  sort: MemorySort | null;
}

/** The query language's sort keys and the library's sort fields they name. */
export const SORT_KEYS: Readonly<Record<string, MemorySort['field']>> = Object.freeze({
  blend: 'blend',
  regret: 'measuredRegret',
  winrate: 'measuredWinRate',
  difficulty: 'difficulty',
  recorded: 'regret',
  rating: 'rating',
  name: 'name',
  created: 'created',
  updated: 'updated',
});

function parseSort(v: string): MemorySort {
  const [key = '', dir, ...rest] = v.toLowerCase().split(':');
  const field = Object.hasOwn(SORT_KEYS, key) ? SORT_KEYS[key] : undefined;
  if (!field || rest.length || (dir !== undefined && dir !== 'asc' && dir !== 'desc')) {
    throw invalidInput(`sort:${v} is not known: sort: takes ${Object.keys(SORT_KEYS).join(', ')}, optionally :asc or :desc (sort:blend, sort:name:desc)`);
  }
  return { field, dir: (dir as 'asc' | 'desc' | undefined) ?? (field === 'name' ? 'asc' : 'desc') };
}

const WORD = /[\p{L}\p{N}_]+/gu;
const STATUSES = new Set(['pass', 'warn', 'fail', 'skip']);
const KEYS = new Set(['tag', 'skill', 'is', 'verdict', 'run', 'hash', 'sort']);

interface Token {
  key: string | null;
  value: string;
  quoted: boolean;
}

/** Splits on white space outside quotes; `key:"a b"` and `"a b"` keep their spaces. */
function tokens(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (i >= text.length) break;
    const keyMatch = /^([a-z]+):/i.exec(text.slice(i));
    let key: string | null = null;
    if (keyMatch && KEYS.has(keyMatch[1]!.toLowerCase())) {
      key = keyMatch[1]!.toLowerCase();
      i += keyMatch[0].length;
    }
    if (text[i] === '"') {
      const end = text.indexOf('"', i + 1);
      const stop = end < 0 ? text.length : end;
      out.push({ key, value: text.slice(i + 1, stop), quoted: true });
      i = stop + 1;
      continue;
    }
    let j = i;
    while (j < text.length && !/\s/.test(text[j]!)) j++;
    out.push({ key, value: text.slice(i, j), quoted: false });
    i = j;
  }
  return out;
}

const hasPunctuation = (s: string) => /[^\p{L}\p{N}_\s]/u.test(s);

export function parseQuery(text: string): ParsedQuery {
  const q: ParsedQuery = { match: null, exact: [], tags: [], skills: [], seed: false, rejected: false, verdicts: [], runs: [], hashes: [], sort: null };
  const terms: string[] = [];
  const ts = tokens(text);
  const lastText = ts.map((t) => t.key === null).lastIndexOf(true);
  ts.forEach((t, idx) => {
    const v = t.value.trim();
    if (t.key !== null) {
      // `tag:` with nothing after it yet (typing): no condition.
      if (!v) return;
      if (t.key === 'tag') q.tags.push(v);
      else if (t.key === 'skill') q.skills.push(v);
      else if (t.key === 'run') q.runs.push(v);
      else if (t.key === 'sort') {
        if (q.sort) throw invalidInput('Give one sort: (a query orders by one key)');
        q.sort = parseSort(v);
      }
      else if (t.key === 'is') {
        if (v === 'seed' || v === 'seeds') q.seed = true;
        else if (v === 'rejected') q.rejected = true;
        else throw invalidInput(`is:${v} is not known: is: takes seed or rejected`);
      } else if (t.key === 'hash') {
        if (!/^[0-9a-f]+$/i.test(v)) throw invalidInput(`hash:${v} is not a hash: hash: takes hex digits (a prefix of a version's SHA-256)`);
        q.hashes.push(v.toLowerCase());
      } else {
        const eq = v.lastIndexOf('=');
        const status = (eq < 0 ? v : v.slice(eq + 1)).toLowerCase();
        const checkId = eq < 0 ? null : v.slice(0, eq);
        if (!STATUSES.has(status) || checkId === '') throw invalidInput(`verdict:${v} is not known: verdict: takes pass, warn or fail, or CHECK=STATUS (verdict:reset-leak=fail)`);
        q.verdicts.push({ checkId, status: status as ParsedQuery['verdicts'][number]['status'] });
      }
      return;
    }
    // The bare word `seed` selects the environments marked seed (every game has `seed` in its code, so as a
    // word it would select everything anyway); quoted, it is the word.
    if (!t.quoted && (v === 'seed' || v === 'seeds')) {
      q.seed = true;
      return;
    }
    const words = v.match(WORD);
    if (!words?.length) return;
    const typing = !t.quoted && idx === lastText;
    if (words.length === 1 && !hasPunctuation(v)) {
      const w = words[0]!;
      // The word being typed is a prefix; one letter alone would expand to half the vocabulary.
      if (t.quoted) terms.push(`"${w}"`);
      else terms.push(`"${w}"${(typing && w.length >= 2) || w.length >= 3 ? '*' : ''}`);
      return;
    }
    // A phrase: its words in order, adjacent. The last one is a prefix while it is being typed.
    terms.push(`"${words.join(' ')}"${typing ? '*' : ''}`);
    if (hasPunctuation(v)) q.exact.push(v);
  });
  q.match = terms.length ? terms.join(' ') : null;
  return q;
}

/** Whether the query holds anything besides text (so a selection is narrowed even without words). */
export const hasOperators = (q: ParsedQuery): boolean => q.tags.length + q.skills.length + q.verdicts.length + q.runs.length + q.hashes.length > 0 || q.seed || q.rejected;
