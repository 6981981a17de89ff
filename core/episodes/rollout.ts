/**
 * The one loop that batches actions and plays them in an interpreter: interactive runs, scripted
 * regret episodes, re-execution to a scrubbed step, replays and seed confirmation all go through
 * it. Batching is what keeps a step cheap (one interpreter round trip per batch); the loop then
 * cuts the batch where SPADE's rollout would have stopped (the converted step's terminated or
 * truncated, or the budget of turns).
 */
import { DomainError } from '../errors';
import { stepEnds, type AgentTurn } from './spade';
import type { StepRecord } from './episodeStore';

export interface ToolCallItem {
  name: string;
  /** Any JSON value, as SPADE passes it to execute_tool (core/models/toolCalls.ts), as JavaScript reads it. */
  arguments: unknown;
  /**
   * The `<tool_call>` block's text the call was read from: what the harness reads with SPADE's parser
   * and passes on (Python's values). Absent in episodes recorded before it was kept, whose calls
   * replay with `arguments`.
   */
  block?: string;
}

export type PlanItem =
  | { kind: 'reset'; seed: number | null; preseed?: number }
  | { kind: 'step'; action: string; raw: string | null }
  /** A tool-use agent turn: each call goes to `execute_tool`, never to `step` (docs/spade-formats.md section 4). */
  | { kind: 'tool'; calls: ToolCallItem[]; raw: string | null };

export type Outcome =
  | { kind: 'reset' | 'step'; record: StepRecord }
  | { kind: 'tool'; calls: ToolCallItem[]; outputs: { output: string; returncode: number }[] };

/**
 * Where the loop's items come from. A script is batchable (its actions do not depend on what the
 * game answers); a model is not: it must see each outcome before its next turn.
 */
export interface Feed {
  batchable: boolean;
  next(prev: Outcome | null): PlanItem | null | Promise<PlanItem | null>;
}

/** A fixed list of items (or a pull function) as a batchable feed. */
export function feedOf(pull: () => PlanItem | null): Feed {
  return { batchable: true, next: () => pull() };
}

/** What the loop needs from a session (EnvSession fits it; unit tests pass a fake). */
export interface PlaySession {
  reset(idx: number, seed: number | null, preseed?: number): Promise<Omit<StepRecord, 'state'>>;
  play(firstIdx: number, actions: string[], opts: { stopWhenDone: boolean; rawActions?: (string | null)[]; state?: boolean }): Promise<StepRecord[]>;
  state(): Promise<unknown>;
  tool?(call: ToolCallItem): Promise<{ output: string; returncode: number }>;
}

export interface PlayOptions {
  /** Index of the first step this loop records. */
  firstIdx: number;
  /** Actions per interpreter round trip. */
  batch: number;
  /** Stop after the first step SPADE's loop stops at (converted terminated or truncated). */
  stopWhenDone: boolean;
  /** At most this many env steps (resets not counted): SPADE's budget of agent turns for rollouts. */
  maxSteps: number;
  /** Record the state tree after every step (default); off for throughput runs that never scrub. */
  states?: boolean;
  /** Read after each step in order; a reason stops the loop after that step. */
  stopAt?(s: StepRecord, n: number): string | null;
  /** Before each batch of steps, with the index of the last step applied. */
  beforeBatch?(cursor: number): Promise<void>;
  /** After each batch (or reset): the records kept, and how far the interpreter actually went. */
  afterBatch?(kept: StepRecord[], interpreterCursor: number): Promise<void>;
}

export interface PlayResult {
  steps: StepRecord[];
  /** Why it stopped: 'policy ended', 'budget', 'terminated', 'truncated', 'error', or a stopAt reason. */
  reason: string;
  /** Steps the interpreter played past the stop (the session stands that far ahead of the recording). */
  overshoot: number;
  /** The agent turns in order (steps and tool turns), for SPADE's return. */
  turns: AgentTurn[];
  /** Tool turns with where they happened: after the step with index `afterIdx`. */
  toolTurns: { afterIdx: number; calls: ToolCallItem[]; outputs: { output: string; returncode: number }[]; raw: string | null }[];
}

export async function playPlan(session: PlaySession, feed: Feed, o: PlayOptions): Promise<PlayResult> {
  const out: StepRecord[] = [];
  const turns: AgentTurn[] = [];
  const toolTurns: PlayResult['toolTurns'] = [];
  const done = (reason: string, overshoot = 0): PlayResult => ({ steps: out, reason, overshoot, turns, toolTurns });
  let idx = o.firstIdx;
  let taken = 0;
  let pending: PlanItem | null = await feed.next(null);
  while (pending) {
    if (pending.kind === 'reset') {
      const r = { ...(await session.reset(idx, pending.seed, pending.preseed)), state: o.states === false ? null : await session.state() };
      out.push(r);
      idx++;
      await o.afterBatch?.([r], idx - 1);
      pending = await feed.next({ kind: 'reset', record: r });
      continue;
    }
    if (taken >= o.maxSteps) return done('budget');
    if (pending.kind === 'tool') {
      if (!session.tool) throw new DomainError('invalid_input', 'this session cannot run tool calls');
      const item = pending;
      const outputs = [];
      for (const c of item.calls) outputs.push(await session.tool(c));
      taken++;
      turns.push({ kind: 'tool' });
      toolTurns.push({ afterIdx: idx - 1, calls: item.calls, outputs, raw: item.raw });
      pending = await feed.next({ kind: 'tool', calls: item.calls, outputs });
      continue;
    }
    const actions: string[] = [];
    const raws: (string | null)[] = [];
    while (pending?.kind === 'step' && actions.length < (feed.batchable ? o.batch : 1) && taken + actions.length < o.maxSteps) {
      actions.push(pending.action);
      raws.push(pending.raw);
      pending = feed.batchable ? await feed.next(null) : null;
    }
    await o.beforeBatch?.(idx - 1);
    const got = await session.play(idx, actions, { stopWhenDone: o.stopWhenDone, rawActions: raws, state: o.states !== false });
    let keep = got.length;
    let reason: string | null = null;
    for (let j = 0; j < got.length && !reason; j++) {
      const s = got[j]!;
      const n = taken + j + 1;
      if (s.error) reason = 'error';
      else reason = o.stopAt?.(s, n) ?? null;
      if (!reason && o.stopWhenDone && s.spade && stepEnds(s.spade)) reason = s.spade.terminated ? 'terminated' : 'truncated';
      if (!reason && o.stopWhenDone && !s.spade && (s.terminated || s.truncated)) reason = s.terminated ? 'terminated' : 'truncated';
      if (reason) keep = j + 1;
    }
    const kept = got.slice(0, keep);
    out.push(...kept);
    for (const k of kept) turns.push({ kind: 'step', spade: k.spade ?? { observation: k.observation ?? '', reward: k.reward ?? 0, terminated: k.terminated, truncated: k.truncated, info: {} } });
    taken += kept.length;
    idx += kept.length;
    await o.afterBatch?.(kept, idx - 1 + (got.length - keep));
    if (reason) return done(reason, got.length - keep);
    // The interpreter stopped early by itself: an error or its own idea of done.
    if (got.length < actions.length) return done(got.at(-1)?.error ? 'error' : 'done');
    if (!feed.batchable) pending = await feed.next({ kind: 'step', record: kept.at(-1)! });
    if (taken >= o.maxSteps && pending) return done('budget');
  }
  return done('policy ended');
}

/** A recorded tool turn: its calls ran after the step with index `afterIdx`. */
export interface RecordedToolTurn {
  afterIdx: number;
  calls: ToolCallItem[];
}

/**
 * A recording as a plan (replay, re-execution): its resets and its actions in order, with the tool
 * turns of a tool-use model episode put back where they happened (they change the game's state
 * without being steps).
 */
export function planOf(steps: StepRecord[], from = 0, to = steps.length - 1, toolTurns: RecordedToolTurn[] = [], preseed?: number): Feed {
  let i = from;
  const tools = toolTurns.filter((t) => t.afterIdx >= from - 1 && t.afterIdx < to);
  let k = 0;
  return feedOf(() => {
    const tt = tools[k];
    if (tt && tt.afterIdx === i - 1) {
      k++;
      return { kind: 'tool', calls: tt.calls, raw: null };
    }
    if (i > to) return null;
    const s = steps[i++];
    if (!s) throw new Error(`recording has no step ${i - 1}`);
    // An unseeded reset replays from the number its interpreter's random started from (meta.preseed).
    return s.kind === 'reset' ? { kind: 'reset', seed: s.seed, ...(s.seed === null && preseed !== undefined ? { preseed } : {}) } : { kind: 'step', action: s.action ?? '', raw: s.rawAction };
  });
}
