/**
 * SPADE's agent protocol over a served model (docs/spade-formats.md sections 2-4, checked against SPADE's
 * orchestrator), as a feed for the one rollout loop:
 *  - cognitive games: the first user message is SPADE's game template around the (hinted) first
 *    observation; later turns send the converted observation raw; the action is extracted from the
 *    reply (`</think>` cut only in thinking mode); a reply cut by max_tokens ends the episode
 *    truncated (return 0);
 *  - tool-use games (`get_tools()` non-empty): the first user message is the observation itself,
 *    the tools go as `tools=`; `<answer>` sends the raw text to `step` (the answer wins over tool
 *    calls), parsed tool calls go to `execute_tool` and come back as `tool` messages (reward 0, never
 *    a step), a reply with neither goes to `step` raw;
 *  - at most `budget` agent turns; a model failure after its retries ends the episode ('error').
 * SPADE's hinted cognitive play differs from the unhinted one in two ways, kept here: it neither cuts
 * `</think>` nor ends on a reply cut by max_tokens.
 */
import { extractAction, toolCallsAsText, type OpenAiToolCall } from '../models/extract';
import { firstPrompt, injectHint } from './hint';
import type { Player, PlayedEpisode } from './regret';
import { playPlan, type Feed, type Outcome, type PlanItem, type PlayResult } from './rollout';
import type { StepRecord } from './episodeStore';
import type { EnvSession } from './session';
import { ModelError, type ChatClient, type ChatMessage, type Usage } from '../models/client';
import { hasAnswer, parseToolCalls } from '../models/toolCalls';
import { errorMessage } from '../api/errorMessage';

export interface AgentTurn {
  turn: number;
  raw: string;
  reasoning: string | null;
  /** What the turn did: an env step (with the action sent), tool calls, or nothing (cut / failed). */
  kind: 'step' | 'tool' | 'none';
  action: string | null;
  calls: { name: string; arguments: unknown; output?: string; returncode?: number }[];
  /** Index of the recorded env step this turn produced. */
  stepIdx: number | null;
  finishReason: string | null;
  usage: Usage | null;
  latencyMs: number;
  attempts: number;
  error: string | null;
}

export interface Transcript {
  messages: ChatMessage[];
  turns: AgentTurn[];
  endedBy: PlayedEpisode['endedBy'] | null;
  toolUse: boolean;
  tools: unknown[];
}

export interface AgentOptions {
  /** What the agent needs of a client (a regret sweep plays a node's answers back through it). */
  client: Pick<ChatClient, 'complete'>;
  seed: number | null;
  /** With seed null: what the interpreter's random starts from before the reset (kept for replay). */
  preseed?: number;
  hintText: string | null;
  budget: number;
  /** SPADE's actor thinking mode (cuts `</think>` before extraction). */
  thinking: boolean;
  /** Sent with every request of this episode instead of the client's setting (an arm's own thinking). */
  requestThinking?: boolean;
  tools: unknown[];
  signal?: AbortSignal;
  /** After every model turn (live views). */
  onTurn?(t: AgentTurn, transcript: Transcript): void;
  /** Continue a recorded transcript (one turn at a time in a live episode). */
  resume?: { transcript: Transcript; nextStepIdx: number };
}

/** The model as a feed: reset first, then one model turn per item, each after the previous outcome. */
export function modelFeed(o: AgentOptions): Feed & { transcript: Transcript; absorbTools(prev: Extract<Outcome, { kind: 'tool' }>): void } {
  const toolUse = o.tools.length > 0;
  const hinted = o.hintText !== null;
  const t: Transcript = o.resume?.transcript ?? { messages: [], turns: [], endedBy: null, toolUse, tools: o.tools };
  let nextStepIdx = o.resume?.nextStepIdx ?? 1;
  let pendingCalls: OpenAiToolCall[] = [];

  const ask = async (): Promise<PlanItem | null> => {
    if (t.turns.length >= o.budget) {
      t.endedBy = 'budget';
      return null;
    }
    const turn: AgentTurn = { turn: t.turns.length + 1, raw: '', reasoning: null, kind: 'none', action: null, calls: [], stepIdx: null, finishReason: null, usage: null, latencyMs: 0, attempts: 0, error: null };
    let c;
    try {
      c = await o.client.complete(t.messages, { ...(toolUse ? { tools: o.tools } : {}), ...(o.signal ? { signal: o.signal } : {}), ...(o.requestThinking !== undefined ? { thinking: o.requestThinking } : {}) });
    } catch (e) {
      turn.error = errorMessage(e);
      if (e instanceof ModelError) turn.attempts = 0;
      t.turns.push(turn);
      t.endedBy = 'error';
      o.onTurn?.(turn, t);
      return null;
    }
    Object.assign(turn, { reasoning: c.reasoning, finishReason: c.finishReason, usage: c.usage, latencyMs: c.latencyMs, attempts: c.attempts });
    // Calls the server parsed out of the text are put back as text, so SPADE's parser reads them.
    const raw = c.toolCalls.length ? `${c.text}${c.text ? '\n' : ''}${toolCallsAsText(c.toolCalls)}` : c.text;
    turn.raw = raw;
    t.turns.push(turn);
    // The assistant message goes back as the server gave it: SPADE's text form, or (where the server
    // returned structured calls) with its tool_calls so that the tool messages can answer them.
    t.messages.push(c.toolCalls.length ? { role: 'assistant', content: c.text, tool_calls: c.toolCalls } : { role: 'assistant', content: c.text });
    pendingCalls = c.toolCalls;
    const cut = c.finishReason === 'length';
    if (cut && !(hinted && !toolUse)) {
      t.endedBy = 'length';
      o.onTurn?.(turn, t);
      return null;
    }
    if (!toolUse) {
      turn.kind = 'step';
      turn.action = extractAction(raw, { thinking: o.thinking && !hinted });
      turn.stepIdx = nextStepIdx++;
      o.onTurn?.(turn, t);
      return { kind: 'step', action: turn.action, raw };
    }
    const calls = hasAnswer(raw) ? [] : parseToolCalls(raw);
    if (calls.length === 0) {
      turn.kind = 'step';
      turn.action = raw;
      turn.stepIdx = nextStepIdx++;
      o.onTurn?.(turn, t);
      return { kind: 'step', action: raw, raw: null };
    }
    turn.kind = 'tool';
    turn.calls = calls.map((x) => ({ ...x }));
    return { kind: 'tool', calls, raw };
  };

  return {
    batchable: false,
    transcript: t,
    async next(prev: Outcome | null): Promise<PlanItem | null> {
      if (prev === null) return { kind: 'reset', seed: o.seed, ...(o.preseed !== undefined ? { preseed: o.preseed } : {}) };
      if (prev.kind !== 'tool') return afterRecord(prev);
      absorbTools(prev);
      return ask();
    },
    absorbTools,
  };

  function absorbTools(prev: Extract<Outcome, { kind: 'tool' }>): void {
    const turn = t.turns.at(-1)!;
    prev.outputs.forEach((out, i) => {
      const call = pendingCalls[i];
      t.messages.push(call?.id ? { role: 'tool', content: out.output, tool_call_id: call.id } : { role: 'tool', content: out.output });
      if (turn.calls[i]) Object.assign(turn.calls[i]!, out);
    });
    o.onTurn?.(turn, t);
  }

  function afterRecord(prev: Extract<Outcome, { record: unknown }>): Promise<PlanItem | null> | null {
    if (prev.kind === 'reset') {
      const obs = prev.record.spade?.observation ?? prev.record.observation ?? '';
      const first = o.hintText !== null ? injectHint(obs, o.hintText) : obs;
      t.messages.push({ role: 'user', content: toolUse ? first : firstPrompt(first) });
      return ask();
    }
    const s = prev.record;
    if (s.spade && (s.spade.terminated || s.spade.truncated)) return null;
    t.messages.push({ role: 'user', content: s.spade?.observation ?? s.observation ?? '' });
    return ask();
  }
}

/** A served model as a regret player (and the engine of a single model episode). */
/**
 * `thinkingByArm`: each arm's thinking, sent with its requests and used at extraction (SPADE's 8B
 * recipe: only the unhinted arm thinks; core/episodes/estimator.ts).
 */
export function modelPlayer(client: Pick<ChatClient, 'complete'>, opts: { thinking: boolean; thinkingByArm?: { hint: boolean; nohint: boolean }; onTurn?: AgentOptions['onTurn']; policy: Record<string, unknown>; states?: boolean }): Player {
  const play: Player = async (session: EnvSession, arm, signal) => {
    // SPADE takes the tool path whenever get_tools() exists and is non-empty (subclass or not).
    const tools = await session.tools();
    const armThinking = opts.thinkingByArm ? (arm.hint ? opts.thinkingByArm.hint : opts.thinkingByArm.nohint) : undefined;
    const feed = modelFeed({ client, seed: arm.seed, ...(arm.preseed !== undefined ? { preseed: arm.preseed } : {}), hintText: arm.hint ? arm.hintText : null, budget: arm.budget, thinking: armThinking ?? opts.thinking, ...(armThinking !== undefined ? { requestThinking: armThinking } : {}), tools, signal, ...(opts.onTurn ? { onTurn: opts.onTurn } : {}) });
    const r = await playPlan(session, feed, { firstIdx: 0, batch: 1, stopWhenDone: true, maxSteps: arm.budget, states: opts.states ?? false });
    const tr = feed.transcript;
    const thinkingMeta = armThinking !== undefined ? { thinking: armThinking } : {};
    const endedBy: PlayedEpisode['endedBy'] = tr.endedBy ?? (r.reason === 'budget' ? 'budget' : 'env');
    return {
      steps: r.steps,
      turns: r.turns,
      endedBy,
      policy: opts.policy,
      error: endedBy === 'error' ? (tr.turns.at(-1)?.error ?? 'the model failed') : null,
      meta: { agent: { messages: tr.messages, turns: tr.turns, tools: tr.tools, toolUse: tr.toolUse, endedBy, toolTurns: r.toolTurns, ...thinkingMeta } },
    };
  };
  // Its first calls, in its order: get_tools(), then reset(seed) (the feed's first item).
  play.prepare = (session, arm) => {
    session.prefetchTools();
    session.prefetchReset(arm.seed, arm.preseed);
  };
  return play;
}

/**
 * One model turn in a live episode: the recorded transcript (meta.agent) continues from the last
 * recorded step, the model answers once, and its action (or tool calls) is played in the session.
 */
export async function modelTurn(
  session: EnvSession,
  recorded: StepRecord[],
  agentMeta: { messages?: ChatMessage[]; turns?: AgentTurn[]; tools?: unknown[]; toolTurns?: PlayResult['toolTurns'] } | undefined,
  o: { client: ChatClient; hintText: string | null; budget: number; thinking: boolean; signal?: AbortSignal },
): Promise<{ steps: StepRecord[]; agent: Record<string, unknown>; ended: string | null }> {
  const last = recorded.at(-1)!;
  const tools = agentMeta?.tools ?? (await session.tools());
  const transcript: Transcript = { messages: [...(agentMeta?.messages ?? [])], turns: [...(agentMeta?.turns ?? [])], endedBy: null, toolUse: tools.length > 0, tools };
  const lastReset = recorded.reduce((k, s) => (s.kind === 'reset' ? s.idx : k), 0);
  const used = transcript.turns.length;
  const feed = modelFeed({ client: o.client, seed: null, hintText: o.hintText, budget: o.budget, thinking: o.thinking, tools, ...(o.signal ? { signal: o.signal } : {}), resume: { transcript, nextStepIdx: last.idx + 1 } });
  if (last.kind === 'step' && last.spade && (last.spade.terminated || last.spade.truncated)) return { steps: [], agent: { ...transcript }, ended: 'the episode is over' };
  if (used >= o.budget) return { steps: [], agent: { ...transcript }, ended: `the budget of ${o.budget} turns is used` };
  // What the model sees next: the first (hinted) prompt after the reset, or the last step's observation.
  const lastTurn = transcript.turns.at(-1);
  const prev: Outcome | null =
    transcript.messages.length === 0 ? { kind: 'reset', record: recorded[lastReset]! } : lastTurn?.kind === 'tool' ? null : { kind: 'step', record: last };
  let item: PlanItem | null = null;
  if (prev) item = await feed.next(prev);
  else item = await (feed as unknown as { next(p: Outcome): Promise<PlanItem | null> }).next({ kind: 'tool', calls: [], outputs: [] });
  if (!item) return { steps: [], agent: { ...transcript, endedBy: transcript.endedBy }, ended: transcript.endedBy };
  let served = false;
  const one: Feed = {
    batchable: false,
    next: (p) => {
      if (p?.kind === 'tool') feed.absorbTools(p);
      if (served) return null;
      served = true;
      return item;
    },
  };
  const r = await playPlan(session, one, { firstIdx: last.idx + 1, batch: 1, stopWhenDone: true, maxSteps: 1 });
  const toolTurns = [...(agentMeta?.toolTurns ?? []), ...r.toolTurns];
  return { steps: r.steps, agent: { messages: transcript.messages, turns: transcript.turns, tools, toolUse: transcript.toolUse, endedBy: transcript.endedBy, toolTurns }, ended: null };
}
