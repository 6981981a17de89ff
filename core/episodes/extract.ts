/**
 * Turning an agent's raw text into the action the environment received, following SPADE's rules
 * (SPADE-FORMATS.md sections 2 and 4), written here from that description:
 *  - with thinking on, only the text after the last `</think>` counts;
 *  - cognitive games: the first flat `\boxed{...}`; failing that, the first `\boxed{` whose braces
 *    balance (nested forms such as `\boxed{\frac{1}{2}}`); failing that, the last `\boxed{` with
 *    whatever follows it; the answer is re-wrapped as `\boxed{<answer>}`. No box: the stripped text.
 *  - tool use: the environment parses `<tool_call>` / `<answer>` itself, so the action is the text
 *    (OpenAI-style `tool_calls` are rewritten as `<tool_call>` blocks first).
 */

const FLAT_BOX = /\\boxed\{([^{}]*)\}/;
const BOX_OPEN = '\\boxed{';

export function afterThink(text: string): string {
  const i = text.lastIndexOf('</think>');
  return i >= 0 ? text.slice(i + '</think>'.length) : text;
}

/** The content of the first `\boxed{` whose braces balance, or null. */
function balancedBox(text: string): string | null {
  let from = 0;
  for (;;) {
    const start = text.indexOf(BOX_OPEN, from);
    if (start < 0) return null;
    let depth = 1;
    let i = start + BOX_OPEN.length;
    for (; i < text.length && depth > 0; i++) {
      const c = text[i];
      if (c === '{') depth++;
      else if (c === '}') depth--;
    }
    if (depth === 0) return text.slice(start + BOX_OPEN.length, i - 1);
    from = start + BOX_OPEN.length;
  }
}

/** The boxed answer in a text (without the wrapper), or null when there is no box at all. */
export function boxedAnswer(text: string): string | null {
  const flat = FLAT_BOX.exec(text);
  if (flat) return flat[1] ?? '';
  const nested = balancedBox(text);
  if (nested !== null) return nested;
  const last = text.lastIndexOf(BOX_OPEN);
  if (last >= 0) return text.slice(last + BOX_OPEN.length).replace(/\}\s*$/, '');
  return null;
}

export interface ExtractOptions {
  /** Only text after `</think>` counts (SPADE's thinking mode). Default: on when the text has one. */
  thinking?: boolean;
  toolUse?: boolean;
}

export function extractAction(raw: string, opts: ExtractOptions = {}): string {
  const thinking = opts.thinking ?? raw.includes('</think>');
  const text = thinking ? afterThink(raw) : raw;
  if (opts.toolUse) return text.trim();
  const answer = boxedAnswer(text);
  return answer === null ? text.trim() : `\\boxed{${answer}}`;
}

export interface OpenAiToolCall {
  function?: { name?: string; arguments?: unknown };
}

/** OpenAI-style `tool_calls` become SPADE's `<tool_call>{"name","arguments"}</tool_call>` text. */
export function toolCallsAsText(calls: OpenAiToolCall[]): string {
  return calls
    .map((c) => {
      let args: unknown = c.function?.arguments ?? {};
      if (typeof args === 'string') {
        try {
          args = JSON.parse(args);
        } catch {
          // Kept as the raw string: the environment reports it as unparsable, as in training.
        }
      }
      return `<tool_call>${JSON.stringify({ name: c.function?.name ?? '', arguments: args })}</tool_call>`;
    })
    .join('\n');
}
