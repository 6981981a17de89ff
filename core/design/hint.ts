/**
 * The privileged hint for a designed game, written by a model from the program alone, as SPADE
 * writes it (docs/spade-formats.md section 3; section 8 item 3): a system prompt by game type, the
 * code as the only input, three tries, and on failure no hint (SPADE then counts regret 0).
 * The prompt text is ours; its rules are SPADE's: one to three sentences, under 100 words, only
 * what the player can see, the approach and the answer format but never the answer.
 */
import type { ChatMessage } from '../models/client';

export const HINT_SYSTEM_COGNITIVE = `You write a short hint for a text game. The player sees only the game's observations and answers with \\boxed{...}; the player never sees the code, and your hint is added to the player's first observation.
Read the code below and work out, from the player's point of view, what the task is, how the right answer or move is found (look at reset() and at the checks in step()), and the exact format the game accepts.
Write the key idea or strategy and the answer format in one to three sentences, under 100 words, naming only things the player can see. Never give the answer itself or any value only the code knows; explain how to get there.
Reply with the hint text only.`;

export const HINT_SYSTEM_TOOL_USE = `You write a short plan for an agent that uses tools. The agent sees the tools and the task, never the code; your plan is added to its first observation.
From the code below, describe in two or three sentences, under 100 words, which kinds of tools to use in which phases, to act one turn at a time, to find arguments by looking them up, and to submit the final answer only at the end. Never write concrete values, a filled-in sequence of calls, or internals of the code; use placeholders.
Reply with the plan text only.`;

export function hintMessages(code: string, toolUse: boolean): ChatMessage[] {
  return [
    { role: 'system', content: toolUse ? HINT_SYSTEM_TOOL_USE : HINT_SYSTEM_COGNITIVE },
    { role: 'user', content: `Environment code:\n\`\`\`python\n${code}\n\`\`\`` },
  ];
}

/** SPADE's reading of a hint answer: stripped; a ```json block holding an object with `hint` wins; else the whole text. */
export function parseHint(answer: string): string {
  const text = answer.trim();
  const fenced = /```json\s*\n([\s\S]*?)\n```/.exec(text);
  if (fenced) {
    try {
      const j = JSON.parse(fenced[1]!) as unknown;
      if (j && typeof j === 'object' && !Array.isArray(j) && typeof (j as { hint?: unknown }).hint === 'string') return (j as { hint: string }).hint.trim();
    } catch {
      // not JSON: the whole text is the hint
    }
  }
  return text;
}

export const HINT_TRIES = 3;

/** SPADE's hint request with its own system prompt (read from the checkout): hint_generator.py:144-147 (and 245-248 for the self-hint). */
export function spadeHintMessages(code: string, system: string): ChatMessage[] {
  return [
    { role: 'system', content: system },
    { role: 'user', content: `Environment code:\n\`\`\`python\n${code}\n\`\`\`` },
  ];
}

/**
 * SPADE's _parse_hint (hint_generator.py:109-133): the stripped text; a ```json block (newlines
 * optional) holding an object with `hint` gives that value as it is; else the whole text.
 */
export function parseSpadeHint(answer: string): string {
  const text = answer.trim();
  const m = /```json\s*\n?([\s\S]*?)\n?```/.exec(text);
  if (m) {
    try {
      const j = JSON.parse(m[1]!.trim()) as unknown;
      if (j && typeof j === 'object' && !Array.isArray(j) && 'hint' in j) {
        const h = (j as { hint: unknown }).hint;
        return typeof h === 'string' ? h : JSON.stringify(h);
      }
    } catch {
      // not JSON: the whole text is the hint
    }
  }
  return text;
}
