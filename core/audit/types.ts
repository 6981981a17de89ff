/** What one audit says about one environment. Check ids and field names are stable: scripts read them. */
export type CheckStatus = 'pass' | 'warn' | 'fail' | 'skip';
export type Verdict = 'pass' | 'warn' | 'fail';

export interface CheckResult {
  id: string;
  status: CheckStatus;
  message: string;
  /** seed, actions, expected, observed, line, traceback... whatever the check could show. */
  evidence: Record<string, unknown>;
}

export interface EnvAudit {
  className: string | null;
  toolUse: boolean;
  checks: CheckResult[];
  elapsedMs: number;
}

export interface AuditOptions {
  /** Turn budget handed to games that accept max_turns (SPADE's paper scripts use 25). */
  maxTurns?: number;
  /** Per-call limit inside the interpreter (reset, step, solution...). */
  callTimeoutSec?: number;
  /** Only these check ids (a trailing `.*` selects a family); all when absent. */
  checks?: string[];
  /** The privileged hint, for hint-leak. */
  hint?: string | null;
}

export const SPADE_CHECKS = ['spade.syntax', 'spade.exec', 'spade.class', 'spade.instantiate', 'spade.methods', 'spade.reset', 'spade.step', 'spade.reset2'] as const;
export const PLAY_CHECKS = ['determinism', 'seed-ignored', 'reset-leak', 'crash-on-action', 'types', 'solution', 'too-easy', 'max-turns', 'hint-leak', 'timing'] as const;
export const TOOL_CHECKS = ['tool.schema', 'tool.methods', 'tool.params', 'tool.reset_gate', 'tool.criteria_at_reset', 'tool.done_reachable'] as const;
/** Checked from outside the interpreter: what the sandbox refused the environment (its attempts are the evidence). */
export const SANDBOX_CHECK = 'sandbox';
export const ALL_CHECKS: readonly string[] = [...SPADE_CHECKS, ...PLAY_CHECKS, ...TOOL_CHECKS, SANDBOX_CHECK];

export function verdictOf(checks: readonly CheckResult[]): Verdict {
  if (checks.some((c) => c.status === 'fail')) return 'fail';
  if (checks.some((c) => c.status === 'warn')) return 'warn';
  return 'pass';
}

/** SPADE accepts a game exactly when none of its own load checks failed. */
export function spadeAccepts(checks: readonly CheckResult[]): boolean {
  return !checks.some((c) => c.id.startsWith('spade.') && c.status === 'fail');
}

export function checkSelected(id: string, wanted: readonly string[] | undefined): boolean {
  if (!wanted || wanted.length === 0) return true;
  return wanted.some((w) => w === id || (w.endsWith('.*') && id.startsWith(w.slice(0, -1))));
}

export function validateCheckIds(ids: readonly string[]): string[] {
  return ids.filter((w) => !(ALL_CHECKS.includes(w) || (w.endsWith('.*') && ALL_CHECKS.some((c) => c.startsWith(w.slice(0, -1))))));
}
