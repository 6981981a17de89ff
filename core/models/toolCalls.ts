/**
 * Tool calls in an agent's text, read as SPADE's rollout reads them (docs/spade-formats.md section 4;
 * checked against SPADE's tool-call parser): each `<tool_call>…</tool_call>` block is the XML form
 * `<function=name><parameter=k>v</parameter></function>` (values stripped, HTML-unescaped, then
 * JSON-decoded where they parse) or else the JSON form `{"name": …, "arguments": {…}}`. Blocks that
 * parse neither way are dropped. `<answer>…</answer>` anywhere wins over tool calls.
 */
import { pyStrip } from './extract';
import { END_OF_TURN, jsPattern, MAX_CALL_NESTING, TOOL_CALL_PATTERNS } from '../api/spadeRules';
import { pyJsonLoads, pyStr, toJs, INT_MAX_STR_DIGITS, type PyValue } from './pythonJson';

export interface ParsedCall {
  name: string;
  /**
   * What SPADE passes to execute_tool: an object, or any other JSON value the JSON form named
   * (a list, a string, a number, null), which SPADE passes on as it is and whose `method(**arguments)`
   * then fails the call with "Error calling <name>: ...".
   */
  arguments: unknown;
  /**
   * The text inside the call's `<tool_call>` tags. The harness reads it again with SPADE's own parser
   * (native/spade_tool_calls.py), so the game gets Python's values: `name` and `arguments` here are
   * JavaScript's reading (1.0 is 1, big integers rounded), for display and decisions only.
   */
  block: string;
}

// The patterns are SPADE's, kept once in core/api/spadeRules.ts (native/spade_tool_calls.py reads the same).
const BLOCK = jsPattern(TOOL_CALL_PATTERNS.block, 'g');
const FUNCTION = jsPattern(TOOL_CALL_PATTERNS.xmlFunction);
const PARAMETER = jsPattern(TOOL_CALL_PATTERNS.xmlParameter, 'g');
const JSON_CALL = jsPattern(TOOL_CALL_PATTERNS.jsonCall);
const ANSWER = jsPattern(TOOL_CALL_PATTERNS.answer);
// A run of digits long enough that Python might refuse it as an integer (pythonJson.ts).
const LONG_INT = new RegExp(`[0-9]{${INT_MAX_STR_DIGITS + 1}}`);

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

/**
 * Python's json.loads as JavaScript values (NaN and ±Infinity included; an integer of more than 4,300
 * digits refused, as Python refuses it). JSON.parse reads everything else the same, so it goes first.
 */
function jsonLoads(s: string): { ok: true; value: unknown } | { ok: false } {
  if (!LONG_INT.test(s)) {
    try {
      return { ok: true, value: JSON.parse(s) as unknown };
    } catch {
      // fall through: perhaps a non-finite number, which Python reads
    }
  }
  try {
    return { ok: true, value: toJs(pyJsonLoads(s)) };
  } catch {
    return { ok: false };
  }
}

function xmlBlock(block: string): ParsedCall | null {
  const f = FUNCTION.exec(block);
  if (!f) return null;
  const params: [string, unknown][] = [];
  for (const p of f[2]!.matchAll(PARAMETER)) {
    const raw = htmlUnescape(pyStrip(p[2]!));
    const j = jsonLoads(raw);
    params.push([p[1]!, j.ok ? j.value : raw]);
  }
  // fromEntries, not assignment: a parameter named __proto__ is a key in SPADE's dict, not a prototype.
  return { name: f[1]!, arguments: Object.fromEntries(params), block };
}

function jsonBlock(block: string): ParsedCall | null {
  const m = JSON_CALL.exec(block);
  if (m) {
    const j = jsonLoads(m[2]!);
    // The pattern only matches `{...}`, so what parses is an object.
    return { name: m[1]!, arguments: j.ok ? j.value : {}, block };
  }
  let data: PyValue;
  try {
    data = pyJsonLoads(pyStrip(block));
  } catch {
    return null;
  }
  const name = data.t === 'dict' ? data.v.get('name') : undefined;
  if (data.t !== 'dict' || name === undefined) return null;
  // SPADE's data.get("arguments", data.get("parameters", {})): a key that is there wins even
  // when its value is null, and whatever JSON value it holds goes on to execute_tool as it is.
  const given = data.v.get('arguments') ?? data.v.get('parameters');
  let args: unknown = given === undefined ? {} : toJs(given);
  if (typeof args === 'string') {
    const a = jsonLoads(args);
    args = a.ok ? a.value : {};
  }
  // SPADE passes the name on as json.loads made it (true, null, 1.0, a list...); its execute_tool
  // looks up f"tool_{name}" and reports f"Unknown tool '{name}'", so the name is Python's str() of it.
  return { name: pyStr(name), arguments: args, block };
}

export function parseToolCalls(text: string): ParsedCall[] {
  let t = text.endsWith(END_OF_TURN) ? text.slice(0, -END_OF_TURN.length) : text;
  t = pyStrip(t);
  const calls: ParsedCall[] = [];
  for (const b of t.matchAll(BLOCK)) {
    // Nested past MAX_CALL_NESTING, SPADE's parser raises and its rollout fails the episode: a call all
    // the same, which the harness reports unreadable (native/harness_tool_call.py), failing this one.
    const c = callNesting(b[1]!) > MAX_CALL_NESTING ? { name: '', arguments: null, block: b[1]! } : (xmlBlock(b[1]!) ?? jsonBlock(b[1]!));
    if (c) calls.push(c);
  }
  return calls;
}

/** The deepest run of [ and { outside JSON strings (unclosed ones count: json.loads recurses into them too). */
export function callNesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  let escaped = false;
  for (const ch of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '[' || ch === '{') deepest = Math.max(deepest, ++depth);
    else if (ch === ']' || ch === '}') depth--;
  }
  return deepest;
}

export function hasAnswer(text: string): boolean {
  return ANSWER.test(text);
}
