/**
 * Turning an agent's raw text into the action the environment received, as SPADE does
 * (docs/spade-formats.md section 2; checked against SPADE's parsing module), written from that description:
 *  - thinking mode on: only the text after the last `</think>` counts (off: the whole text);
 *  - the first match of a flat box, then of a doubled-brace box, then of a tripled-brace box;
 *  - else the LAST `\boxed`, the first `{` after it and its balanced span, with up to two outer
 *    brace pairs stripped;
 *  - the answer is stripped and re-wrapped as `\boxed{<answer>}`; nothing found, an empty answer or
 *    an unbalanced box -> the stripped raw text.
 *  - tool use: the text goes to the game as it is (stripped); see toolCalls.ts for the tool loop.
 */

import { AGENT_PROMPT, BOXED_PATTERNS } from '../api/spadeRules';
import { pyJsonLoads } from './pythonJson';

// Kept once in core/api/spadeRules.ts (native/spade_rules.py is generated from it).
const PATTERNS = BOXED_PATTERNS.map((p) => new RegExp(p));

/** Python's str.strip() with no argument: Unicode whitespace at both ends. */
export function pyStrip(s: string): string {
  return s.replace(/^[\s\u001c-\u001f\u0085]+|[\s\u001c-\u001f\u0085]+$/gu, '');
}

/** The text after the last `</think>` (SPADE's `split('</think>')[-1]`). */
export function afterThink(text: string): string {
  const i = text.lastIndexOf(AGENT_PROMPT.thinkEnd);
  return i >= 0 ? text.slice(i + AGENT_PROMPT.thinkEnd.length) : text;
}

/** SPADE's boxed answer (stripped, without the wrapper), or null when there is none. An empty box gives ''. */
export function boxedAnswer(text: string): string | null {
  if (!text) return null;
  for (const re of PATTERNS) {
    const m = re.exec(text);
    if (m) return pyStrip(m[1]!);
  }
  const at = text.lastIndexOf('\\boxed');
  const start = at >= 0 ? text.indexOf('{', at) : -1;
  if (start < 0) return null;
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '{') depth++;
    else if (c === '}') {
      depth--;
      if (depth === 0) {
        let content = pyStrip(text.slice(start + 1, i));
        for (let k = 0; k < 2; k++) if (content.startsWith('{') && content.endsWith('}')) content = pyStrip(content.slice(1, -1));
        return content;
      }
    }
  }
  return null;
}

export interface ExtractOptions {
  /** SPADE's thinking mode: only text after the last `</think>` counts. Off unless asked. */
  thinking?: boolean;
  toolUse?: boolean;
}

export function extractAction(raw: string, opts: ExtractOptions = {}): string {
  const text = opts.thinking ? afterThink(raw) : raw;
  if (opts.toolUse) return pyStrip(text);
  const answer = boxedAnswer(text);
  return answer ? `\\boxed{${answer}}` : pyStrip(text);
}

export interface OpenAiToolCall {
  id?: string;
  type?: string;
  /** `name` is whatever JSON value the server sent; SPADE's parser makes the tool's name of it (core/models/toolCalls.ts). */
  function?: { name?: unknown; arguments?: unknown };
}

/**
 * OpenAI-style `tool_calls` become SPADE's `<tool_call>{"name","arguments"}</tool_call>` text. An
 * `arguments` string that Python's json.loads reads goes into the text as it is, so that SPADE's
 * parser (and the harness, which reads the block again) sees the model's own `1.0` or
 * `12345678901234567890`, not what JSON.parse made of them; one it refuses stays a JSON string,
 * which SPADE's parser turns into `{}`.
 */
export function toolCallsAsText(calls: OpenAiToolCall[]): string {
  return calls
    .map((c) => {
      const args: unknown = c.function?.arguments ?? {};
      // A name that is not a string (true, null, 1.5) stays that JSON value in the text, so that SPADE's
      // parser turns it into the name SPADE would look up ("True", "None"), as for a model that wrote it.
      const name = JSON.stringify(c.function?.name === undefined ? '' : c.function.name);
      return `<tool_call>{"name":${name},"arguments":${typeof args === 'string' && readsAsJson(args) ? args : JSON.stringify(args)}}</tool_call>`;
    })
    .join('\n');
}

function readsAsJson(text: string): boolean {
  try {
    pyJsonLoads(text);
    return true;
  } catch {
    return false;
  }
}
