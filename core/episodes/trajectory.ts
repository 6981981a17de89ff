/**
 * Reading training trajectories: OpenAI-style `messages` arrays (user, assistant, tool roles),
 * as one JSON value or JSONL. Accepted shapes:
 *  - `[{role, content}, ...]`                                 one trajectory
 *  - `{messages: [...], seed?, env_hash?, game_file?, rewards?, hint?}`   one trajectory with metadata
 *  - `[{messages: ...}, ...]` or JSONL of such objects        several trajectories
 *  - JSONL whose lines are single messages                    one trajectory
 * SPADE writes no episode logs (docs/spade-formats.md section 3), so these come from researchers' own rollout
 * dumps; metadata keys are read in the spellings most such dumps use.
 */
import { DomainError } from '../errors';
import { hasAnswer, parseToolCalls } from '../models/toolCalls';
import { extractAction, toolCallsAsText, type OpenAiToolCall } from '../models/extract';
import { observationFromFirstPrompt, splitHint } from './hint';
import { errorMessage } from '../api/errorMessage';

export interface Message {
  role: string;
  content: unknown;
  name?: string;
  tool_calls?: OpenAiToolCall[];
  reward?: unknown;
}

export interface TrajectoryStep {
  raw: string;
  action: string;
  /** What the environment answered at training time (the next user or tool message), if recorded. */
  observation: string | null;
  reward: number | null;
  /**
   * A tool-use turn as SPADE's orchestrator runs it: parsed calls went to execute_tool (never to
   * step) and their outputs came back as tool messages. Such a turn is not a step of the game.
   */
  tool?: { calls: { name: string; arguments: unknown }[]; outputs: string[] };
}

export interface Trajectory {
  index: number;
  initialObservation: string | null;
  hint: string | null;
  steps: TrajectoryStep[];
  seed: number | null;
  envHash: string | null;
  gameFile: string | null;
  toolUse: boolean;
}

function text(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((p) => (typeof p === 'string' ? p : p && typeof p === 'object' && 'text' in p ? String((p as { text: unknown }).text) : '')).join('');
  }
  return content === null || content === undefined ? '' : JSON.stringify(content);
}

function isMessage(v: unknown): v is Message {
  return !!v && typeof v === 'object' && typeof (v as { role?: unknown }).role === 'string';
}

function pick(o: Record<string, unknown>, keys: string[]): unknown {
  for (const k of keys) if (o[k] !== undefined && o[k] !== null) return o[k];
  const meta = o.metadata ?? o.meta ?? o.info;
  if (meta && typeof meta === 'object') for (const k of keys) if ((meta as Record<string, unknown>)[k] !== undefined) return (meta as Record<string, unknown>)[k];
  return undefined;
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : null;
}

export function trajectoryFrom(messages: Message[], meta: Record<string, unknown>, index: number, thinking?: boolean): Trajectory {
  const toolUse = messages.some((m) => m.role === 'tool' || (m.role === 'assistant' && (Array.isArray(m.tool_calls) || /<tool_call>|<answer>/.test(text(m.content)))));
  const convo = messages.filter((m) => m.role !== 'system');
  let initialObservation: string | null = null;
  let hint: string | null = null;
  const steps: TrajectoryStep[] = [];
  const rewards = Array.isArray(meta.rewards) ? (meta.rewards as unknown[]).map(num) : null;
  let cur: TrajectoryStep | null = null;
  // SPADE cuts at </think> only in thinking mode; a dump does not say which mode it ran in, so a
  // trajectory whose assistant turns carry </think> is read as a thinking-mode run (labelled guess).
  const think = thinking ?? convo.some((m) => m.role === 'assistant' && text(m.content).includes('</think>'));
  let toolParts: string[] = [];
  const flushTools = () => {
    if (cur?.tool) cur.tool.outputs = [...toolParts];
    else if (cur && toolParts.length) cur.observation = toolParts.join('\n');
    toolParts = [];
  };
  for (const m of convo) {
    const body = text(m.content);
    if (m.role === 'user') {
      if (!cur && initialObservation === null) {
        const split = splitHint(observationFromFirstPrompt(body));
        initialObservation = split.observation;
        hint = split.hint;
      } else if (cur) {
        flushTools();
        if (cur.observation === null) cur.observation = body;
        if (cur.reward === null) cur.reward = num(m.reward);
      }
    } else if (m.role === 'tool') {
      toolParts.push(cur?.tool ? body : m.name ? `[${m.name}] ${body}` : body);
      if (cur && cur.reward === null) cur.reward = num(m.reward);
    } else if (m.role === 'assistant') {
      flushTools();
      const raw = Array.isArray(m.tool_calls) && m.tool_calls.length ? `${body}${body ? '\n' : ''}${toolCallsAsText(m.tool_calls)}` : body;
      cur = { raw, action: extractAction(raw, { thinking: think, toolUse }), observation: null, reward: num(m.reward) };
      // docs/spade-formats.md section 4: an <answer> goes to step (it wins over tool calls); parsed calls go to execute_tool.
      const calls = toolUse && !hasAnswer(raw) ? parseToolCalls(raw) : [];
      if (calls.length) cur.tool = { calls, outputs: [] };
      steps.push(cur);
    }
  }
  flushTools();
  if (rewards) steps.forEach((s, i) => (s.reward = rewards[i] ?? s.reward));
  const seed = num(pick(meta, ['seed', 'env_seed', 'game_seed']));
  const envHash = pick(meta, ['env_hash', 'envHash', 'version_hash', 'hash', 'sha256']);
  const gameFile = pick(meta, ['game_file', 'gameFile', 'env_file', 'game', 'env', 'environment', 'file']);
  const metaHint = pick(meta, ['hint', 'hint_full']);
  return {
    index,
    initialObservation,
    hint: hint ?? (typeof metaHint === 'string' && (meta.with_hint === true || meta.hinted === true) ? metaHint : null),
    steps,
    seed: seed === null ? null : Math.trunc(seed),
    envHash: typeof envHash === 'string' && /^[0-9a-f]{64}$/i.test(envHash) ? envHash.toLowerCase() : null,
    gameFile: typeof gameFile === 'string' ? gameFile : null,
    toolUse,
  };
}

function fromValue(v: unknown, index: number, thinking?: boolean): Trajectory[] {
  if (Array.isArray(v)) {
    if (v.length && v.every(isMessage)) return [trajectoryFrom(v, {}, index, thinking)];
    return v.flatMap((x, i) => fromValue(x, index + i, thinking));
  }
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const msgs = o.messages ?? o.conversation ?? o.trajectory;
    if (Array.isArray(msgs) && msgs.every(isMessage)) return [trajectoryFrom(msgs, o, index, thinking)];
  }
  throw new DomainError('invalid_input', `Trajectory ${index + 1}: expected an array of {role, content} messages or an object with "messages"`);
}

export function parseTrajectories(input: string, thinking?: boolean): Trajectory[] {
  const trimmed = input.trim();
  if (!trimmed) throw new DomainError('invalid_input', 'The trajectory file is empty');
  try {
    return fromValue(JSON.parse(trimmed), 0, thinking);
  } catch (e) {
    if (e instanceof DomainError) throw e;
  }
  const lines = trimmed.split(/\r?\n/).filter((l) => l.trim());
  const values = lines.map((l, i) => {
    try {
      return JSON.parse(l) as unknown;
    } catch (e) {
      throw new DomainError('invalid_input', `Line ${i + 1} is not JSON: ${errorMessage(e)}`);
    }
  });
  if (values.every(isMessage)) return [trajectoryFrom(values as Message[], {}, 0, thinking)];
  return values.flatMap((v, i) => fromValue(v, i, thinking));
}

/** File stems a trajectory might name its environment by (`game_00000_015_logical_deduction`). */
export function candidateStems(...names: (string | null | undefined)[]): string[] {
  const out: string[] = [];
  for (const n of names) {
    if (!n) continue;
    const base = n.split(/[\\/]/).pop()!.replace(/\.(py|json|jsonl|txt)$/i, '');
    out.push(base);
    const m = /game_\d{5}_\d{3}_[A-Za-z0-9]+(?:_[A-Za-z]+)*/.exec(base);
    if (m) {
      out.push(m[0]);
      // `..._logical_deduction_traj` -> drop trailing words one by one until a stem matches.
      const parts = m[0].split('_');
      for (let k = parts.length - 1; k > 3; k--) out.push(parts.slice(0, k).join('_'));
    }
  }
  return [...new Set(out)];
}
