/**
 * Where actions come from when the workbench plays by itself: a script, the environment's own
 * solution(), or SPADE's random-guess baseline (`\boxed{randint(1,100)}`, the "too easy" test).
 */
import { DomainError } from '../errors';
import type { Policy } from '../api/calls/episodes';
import { hasAnswer, parseToolCalls } from '../models/toolCalls';
import { extractAction } from '../models/extract';
import type { Player } from './regret';
import { feedOf, playPlan, type Feed } from './rollout';
import type { EnvSession } from './session';

export interface ActionSource {
  /** The next action and the text it came from, or null when the policy has nothing more to say. */
  next(): { action: string; raw: string | null } | null;
}

/** mulberry32: small, seedable and identical everywhere, so a random policy replays exactly. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function scriptSource(actions: string[], extract: boolean, toolUse = false): ActionSource {
  let i = 0;
  return {
    next() {
      if (i >= actions.length) return null;
      const raw = actions[i++]!;
      const action = extract ? extractAction(raw, { toolUse }) : raw;
      return { action, raw: action === raw ? null : raw };
    },
  };
}

export function randomSource(seed: number, lo: number, hi: number): ActionSource {
  const rnd = seededRandom(seed);
  const [a, b] = lo <= hi ? [lo, hi] : [hi, lo];
  return { next: () => ({ action: `\\boxed{${a + Math.floor(rnd() * (b - a + 1))}}`, raw: null }) };
}

/** solution() may return one answer or a list of moves; either becomes boxed actions. */
export function solutionActions(value: unknown): string[] {
  const wrap = (v: unknown): string => {
    const s = typeof v === 'string' ? v : JSON.stringify(v);
    return s.includes('\\boxed{') || s.includes('<answer>') || s.includes('<tool_call>') ? s : `\\boxed{${s}}`;
  };
  if (Array.isArray(value)) return value.map(wrap);
  return [wrap(value)];
}

export function describePolicy(p: Policy): Record<string, unknown> {
  if (p.kind === 'script') return { kind: 'script', count: p.actions.length, extract: p.extract };
  return { ...p };
}

/**
 * An action source as the rollout loop's feed (scripts do not look at what the game answers). In a
 * tool-use game each scripted text is dispatched as SPADE's orchestrator does (docs/spade-formats.md section 4):
 * `<answer>` goes to step (it wins over tool calls), parsed tool calls go to execute_tool, anything
 * else goes to step as raw text.
 */
export function feedFromSource(src: ActionSource, toolUse = false): Feed {
  return feedOf(() => {
    const n = src.next();
    if (!n) return null;
    const text = n.raw ?? n.action;
    if (toolUse && !hasAnswer(text)) {
      const calls = parseToolCalls(text);
      if (calls.length) return { kind: 'tool', calls, raw: text };
    }
    return { kind: 'step', action: n.action, raw: n.raw };
  });
}

/** The actions a scripted policy plays in an opened session (solution() is asked of that session). */
export async function actionSourceFor(session: EnvSession, policy: Policy, seed: number | null, toolUse: boolean): Promise<ActionSource> {
  if (policy.kind === 'script') return scriptSource(policy.actions, policy.extract, toolUse);
  if (policy.kind === 'random') return randomSource(policy.seed ?? seed ?? 0, policy.lo, policy.hi);
  const sol = await session.solution();
  if (!sol.ok) throw new DomainError('invalid_input', `solution() failed: ${sol.message}`);
  // A tool-use solution() that describes its calls (SPADE's own prompt examples do) plays as those
  // calls, then the answer, as the audit plays it (native/harness_solution.py); not as one answer.
  if (toolUse && sol.plan) return scriptSource(sol.plan, false, toolUse);
  return scriptSource(solutionActions(sol.value), false, toolUse);
}

/** A scripted policy as a regret player: reset with the seed, then SPADE's loop within the budget. */
export function scriptedPlayer(policy: Policy, hintPolicy?: Policy): Player {
  const play: Player = async (session, arm) => {
    const p = arm.hint && hintPolicy ? hintPolicy : policy;
    const reset = { ...(await session.reset(0, arm.seed, arm.preseed)), state: await session.state() };
    // A reset that raised is SPADE's "Error during reset. Starting new game." observation: play goes on.
    const src = await actionSourceFor(session, p, arm.seed, arm.toolUse).catch(() => scriptSource([], false));
    const r = await playPlan(session, feedFromSource(src, arm.toolUse), { firstIdx: 1, batch: 16, stopWhenDone: true, maxSteps: arm.budget });
    return { steps: [reset, ...r.steps], turns: r.turns, endedBy: r.reason === 'budget' || r.reason === 'policy ended' ? 'budget' : 'env', policy: describePolicy(p) };
  };
  // Its first call: reset(seed).
  play.prepare = (session, arm) => session.prefetchReset(arm.seed, arm.preseed);
  return play;
}
