/**
 * Tool calls in an agent's text, read as SPADE's rollout reads them (docs/spade-formats.md section 4;
 * checked against SPADE's tool-call parser): each `<tool_call>…</tool_call>` block is the XML form
 * `<function=name><parameter=k>v</parameter></function>` (values stripped, HTML-unescaped, then
 * JSON-decoded where they parse) or else the JSON form `{"name": …, "arguments": {…}}`. Blocks that
 * parse neither way are dropped. `<answer>…</answer>` anywhere wins over tool calls.
 */
import { pyStrip } from '../episodes/extract';

export interface ParsedCall {
  name: string;
  arguments: Record<string, unknown>;
}

const BLOCK = /<tool_call>([\s\S]*?)<\/tool_call>/g;
const FUNCTION = /<function=([\p{L}\p{N}_]+)>([\s\S]*?)<\/function>/u;
const PARAMETER = /<parameter=([\p{L}\p{N}_]+)>([\s\S]*?)<\/parameter>/gu;
// As SPADE's pattern: the arguments end at the FIRST `}` followed by the closing brace, so nested
// objects fail to decode and become {} (a quirk kept on purpose).
const JSON_CALL = /\{\s*"name"\s*:\s*"([\p{L}\p{N}_]+)"\s*,\s*"arguments"\s*:\s*(\{[\s\S]*?\})\s*\}/u;
const ANSWER = /<answer>([\s\S]*?)<\/answer>/;

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

/** Python json.loads accepts NaN/Infinity too; everything else as JSON.parse. */
function jsonLoads(s: string): { ok: true; value: unknown } | { ok: false } {
  const t = s.trim();
  if (t === 'NaN') return { ok: true, value: Number.NaN };
  if (t === 'Infinity') return { ok: true, value: Number.POSITIVE_INFINITY };
  if (t === '-Infinity') return { ok: true, value: Number.NEGATIVE_INFINITY };
  try {
    return { ok: true, value: JSON.parse(s) as unknown };
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
    return { name: m[1]!, arguments: j.ok && j.value && typeof j.value === 'object' && !Array.isArray(j.value) ? (j.value as Record<string, unknown>) : {} };
  }
  const j = jsonLoads(pyStrip(block));
  if (j.ok && j.value && typeof j.value === 'object' && !Array.isArray(j.value) && 'name' in j.value) {
    const o = j.value as { name: unknown; arguments?: unknown; parameters?: unknown };
    let args: unknown = o.arguments !== undefined ? o.arguments : o.parameters !== undefined ? o.parameters : {};
    if (typeof args === 'string') {
      const a = jsonLoads(args);
      args = a.ok ? a.value : {};
    }
    return { name: String(o.name), arguments: (args && typeof args === 'object' ? args : {}) as Record<string, unknown> };
  }
  return null;
}

export function parseToolCalls(text: string): ParsedCall[] {
  let t = text.endsWith('<|im_end|>') ? text.slice(0, -'<|im_end|>'.length) : text;
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
