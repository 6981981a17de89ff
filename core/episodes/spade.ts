/**
 * SPADE's view of a step and of an episode, as pure functions (docs/spade-formats.md sections 2 and 3):
 * the wrapper's converted step (`spade` on every harness step reply, native/README.md, "SPADE mode"), the episode
 * return, the end of a rollout, hint injection and the regret arithmetic.
 */

import type { SpadeReward, SpadeStep } from '../api/spadeStep';

import { DEFAULT_BUDGET } from '../api/spadeRules';

export type { SpadeReward, SpadeStep };

/** SPADE's default budget of agent turns (SpadeConfig.max_turns). */
export const SPADE_DEFAULT_BUDGET = DEFAULT_BUDGET;

export function rewardValue(r: SpadeReward): number {
  if (typeof r === 'number') return r;
  return r === 'NaN' ? Number.NaN : r === 'Infinity' ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
}

/**
 * Python's `max(-1.0, min(1.0, r))`: builtin min/max keep their first argument unless a later one
 * compares smaller/greater, so a NaN reward clamps to 1.0 (not NaN).
 */
export function pyClamp(r: number): number {
  const lo = r < 1 ? r : 1;
  return lo > -1 ? lo : -1;
}

/** One agent turn as the return sees it: an environment step, or a tool turn (reward 0, never a step). */
export type AgentTurn = { kind: 'step'; spade: SpadeStep } | { kind: 'tool' };

/**
 * SPADE's episode return: 0 unless the episode ended with a terminated step, else that step's
 * reward clamped to [-1, 1]. A trailing tool turn (reward 0.0 appended, `terminated` still the last
 * step's) or a turn cut by max_tokens ends an episode unterminated.
 */
export function episodeReturn(turns: AgentTurn[], endedBy: 'env' | 'budget' | 'length' | 'error' | 'refused' = 'env'): number {
  // A failed play has no return; a play SPADE refused at load never stepped (0.0, as SPADE scores a hinted one).
  if (endedBy === 'error' || endedBy === 'refused') return 0;
  const last = turns.at(-1);
  if (!last || last.kind !== 'step' || !last.spade.terminated) return 0;
  return pyClamp(rewardValue(last.spade.reward));
}

/** Whether SPADE's loop stops after this step. */
export function stepEnds(s: SpadeStep): boolean {
  return s.terminated || s.truncated;
}

const mean = (xs: number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/**
 * SPADE's hint-based regret for one game: R(hint) (mean over the hinted plays) − mean R(no hint);
 * 0 when hint generation failed (or there is no hint). An arm with no plays counts as 0.
 */
export function spadeRegret(input: { hintReturns: number[]; noHintReturns: number[]; hintFailed?: boolean }): { rHint: number; rNoHint: number; regret: number } {
  const rNoHint = mean(input.noHintReturns);
  if (input.hintFailed) return { rHint: 0, rNoHint, regret: 0 };
  const rHint = mean(input.hintReturns);
  return { rHint, rNoHint, regret: rHint - rNoHint };
}

// ----------------------------------------------------------------------------------------------
// Until every harness reply carries `spade`: SPADE's conversion rebuilt from the described values.
// Python's str() of an arbitrary object cannot be rebuilt here, so non-str observations are
// approximated (JSON) and marked; a reply's own `spade` always wins.

interface DescribedStep {
  observation?: unknown;
  reward?: unknown;
  terminated?: unknown;
  truncated?: unknown;
  info?: unknown;
  shape?: string;
  error?: { message: string } | undefined;
  spade?: SpadeStep;
}

/** Python bool() of a described value. */
function truthy(v: unknown): boolean {
  if (v === null || v === undefined) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') {
    const o = v as { v?: unknown; items?: unknown[]; len?: number };
    if ('v' in o) return truthy(o.v);
    if (Array.isArray(o.items)) return o.items.length > 0;
    if (typeof o.len === 'number') return o.len > 0;
    return true;
  }
  return true;
}

function floatOf(v: unknown): SpadeReward {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') {
    if (/^nan$/i.test(v) || v === 'NaN') return 'NaN';
    if (/^\+?inf(inity)?$/i.test(v)) return 'Infinity';
    if (/^-inf(inity)?$/i.test(v)) return '-Infinity';
    const n = Number(v);
    return Number.isFinite(n) ? n : 'NaN';
  }
  if (typeof v === 'object' && v && 'v' in v) return floatOf((v as { v: unknown }).v);
  return 0;
}

function strOf(v: unknown): string {
  if (v === null || v === undefined) return 'No observation';
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number') return String(v);
  return JSON.stringify(v);
}

/** SPADE's info filter (`_sanitize_info_dict`): numbers, bools and None stay, strings go, the rest through float(). */
function sanitizedInfo(v: unknown): SpadeStep['info'] {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return {};
  const out: SpadeStep['info'] = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (typeof x === 'number' || typeof x === 'boolean' || x === null) out[k] = x;
    else if (typeof x === 'object' && 'v' in x) out[k] = floatOf(x.v);
  }
  return out;
}

/** SPADE's converted step: the harness's own `spade` when present, else rebuilt from the described reply. */
export function spadeOf(r: DescribedStep): SpadeStep {
  if (r.spade) return r.spade;
  if (r.error) return { observation: `Error: ${r.error.message}`, reward: -1, terminated: true, truncated: false, info: {}, error: 'exception' };
  if (r.shape !== 'tuple5') return { observation: 'Invalid game response', reward: -1, terminated: true, truncated: false, info: {}, error: 'shape' };
  return { observation: strOf(r.observation), reward: floatOf(r.reward), terminated: truthy(r.terminated), truncated: truthy(r.truncated), info: sanitizedInfo(r.info) };
}

/** SPADE's reset observation: a bare str accepted, other values str()-ed, an exception a fixed text. */
export function spadeResetObservation(r: { observation?: unknown; error?: unknown; spade?: { observation: string } }): string {
  if (r.spade) return r.spade.observation;
  if (r.error) return 'Error during reset. Starting new game.';
  return typeof r.observation === 'string' ? r.observation : strOf(r.observation);
}
