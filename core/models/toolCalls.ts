/**
 * Tool calls in an agent's text, read as SPADE's rollout reads them (docs/spade-formats.md section 4;
 * checked against SPADE's tool-call parser): each `<tool_call>…</tool_call>` block is the XML form
 * `<function=name><parameter=k>v</parameter></function>` (values stripped, HTML-unescaped, then
 * JSON-decoded where they parse) or else the JSON form `{"name": …, "arguments": {…}}`. Blocks that
 * parse neither way are dropped. `<answer>…</answer>` anywhere wins over tool calls.
 */
import { pyStrip } from '../episodes/extract';
import { END_OF_TURN, jsPattern, TOOL_CALL_PATTERNS } from '../api/spadeRules';

export interface ParsedCall {
  name: string;
  /**
   * What SPADE passes to execute_tool: an object, or any other JSON value the JSON form named
   * (a list, a string, a number, null), which SPADE passes on as it is and whose `method(**arguments)`
   * then fails the call with "Error calling <name>: ...".
   */
  arguments: unknown;
}

// The patterns are SPADE's, kept once in core/api/spadeRules.ts (native/spade_tool_calls.py reads the same).
const BLOCK = jsPattern(TOOL_CALL_PATTERNS.block, 'g');
const FUNCTION = jsPattern(TOOL_CALL_PATTERNS.xmlFunction);
const PARAMETER = jsPattern(TOOL_CALL_PATTERNS.xmlParameter, 'g');
const JSON_CALL = jsPattern(TOOL_CALL_PATTERNS.jsonCall);
const ANSWER = jsPattern(TOOL_CALL_PATTERNS.answer);

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', tab: '\t', newline: '\n' };

/** HTML character references (numeric and the common named ones) as Python's html.unescape reads them. */
export function htmlUnescape(s: string): string {
  return s.replace(/&(#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z]+);?/g, (m, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '\ufffd';
    }
    const v = NAMED[ref];
    return v !== undefined && m.endsWith(';') ? v : v !== undefined && ['amp', 'lt', 'gt', 'quot'].includes(ref) ? v : m;
  });
}

const NON_FINITE: Record<string, number> = { NaN: Number.NaN, Infinity: Number.POSITIVE_INFINITY, '-Infinity': Number.NEGATIVE_INFINITY };

/**
 * Python's json.loads reads NaN, Infinity and -Infinity as values anywhere in a document, which
 * JSON.parse refuses: outside strings they are swapped for marked strings and turned back into
 * numbers while parsing. Everything else is JSON.parse.
 */
function jsonLoads(s: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(s) as unknown };
  } catch {
    // fall through: perhaps a non-finite number, which Python reads
  }
  const mark = `\u0000nonfinite${Math.random().toString(36).slice(2)}:`;
  let out = '';
  let inString = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (inString) {
      out += c;
      if (c === '\\') out += s[++i] ?? '';
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    const token = /^(?:-Infinity|Infinity|NaN)/.exec(s.slice(i, i + 9))?.[0];
    if (token) {
      out += JSON.stringify(mark + token);
      i += token.length - 1;
    } else out += c;
  }
  try {
    const value = JSON.parse(out, (_k, v: unknown) => (typeof v === 'string' && v.startsWith(mark) ? NON_FINITE[v.slice(mark.length)] : v)) as unknown;
    return { ok: true, value };
  } catch {
    return { ok: false };
  }
}

function xmlBlock(block: string): ParsedCall | null {
  const f = FUNCTION.exec(block);
  if (!f) return null;
  const args: Record<string, unknown> = {};
  for (const p of f[2]!.matchAll(PARAMETER)) {
    const raw = htmlUnescape(pyStrip(p[2]!));
    const j = jsonLoads(raw);
    args[p[1]!] = j.ok ? j.value : raw;
  }
  return { name: f[1]!, arguments: args };
}

function jsonBlock(block: string): ParsedCall | null {
  const m = JSON_CALL.exec(block);
  if (m) {
    const j = jsonLoads(m[2]!);
    // The pattern only matches `{...}`, so what parses is an object.
    return { name: m[1]!, arguments: j.ok ? j.value : {} };
  }
  const j = jsonLoads(pyStrip(block));
  if (j.ok && j.value && typeof j.value === 'object' && !Array.isArray(j.value) && 'name' in j.value) {
    const o = j.value as { name: unknown; arguments?: unknown; parameters?: unknown };
    // SPADE's data.get("arguments", data.get("parameters", {})): a key that is there wins even
    // when its value is null, and whatever JSON value it holds goes on to execute_tool as it is.
    let args: unknown = 'arguments' in o ? o.arguments : 'parameters' in o ? o.parameters : {};
    if (typeof args === 'string') {
      const a = jsonLoads(args);
      args = a.ok ? a.value : {};
    }
    return { name: String(o.name), arguments: args };
  }
  return null;
}

export function parseToolCalls(text: string): ParsedCall[] {
  let t = text.endsWith(END_OF_TURN) ? text.slice(0, -END_OF_TURN.length) : text;
  t = pyStrip(t);
  const calls: ParsedCall[] = [];
  for (const b of t.matchAll(BLOCK)) {
    const c = xmlBlock(b[1]!) ?? jsonBlock(b[1]!);
    if (c) calls.push(c);
  }
  return calls;
}

export function hasAnswer(text: string): boolean {
  return ANSWER.test(text);
}
