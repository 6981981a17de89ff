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
  /** Per-call limit of the workbench's own checks inside the interpreter (reset, step, solution...). */
  callTimeoutSec?: number;
  /** Per-call limit of SPADE's load checks (SPADE: 30 s). Tests lower it; a verdict should not. */
  spadeCallTimeoutSec?: number;
  /** Limit of the whole pool-admission check (SPADE's validate_game: 60 s). */
  spadeAdmissionTimeoutSec?: number;
  /** Only these check ids (a trailing `.*` selects a family); all when absent. */
  checks?: string[];
  /** The privileged hint, for hint-leak. */
  hint?: string | null;
  /**
   * Run SPADE's validate_game (`spade.admission`) even when the respect-mode load before it failed
   * (not after a hang): SPADE's trainer decides on validate_game alone (design rounds' SPADE mode).
   */
  admissionAlways?: boolean;
  /** `legacy`: the random-guess test loads the game as SPADE's test does (max_turns forced to 1000). */
  guessLoad?: 'legacy' | 'respect';
  /** SPADE's reset gate (criteria_throw_at_reset) at this max_turns, as `spade.reset-gate` (not in SPADE_CHECKS). */
  resetGate?: { maxTurns: number };
}

export { SPADE_CHECKS, PLAY_CHECKS, TOOL_CHECKS } from '../api/spadeRules';
/** OUTPUT_CHECKS: over the whole audit, loaded or not, bytes the game wrote to stdout and stderr past a bound (a warning; the count is the evidence). */
export { OUTPUT_CHECKS } from '../api/spadeRules';
/** Checked from outside the interpreter: what the sandbox refused the environment (its attempts are the evidence). */
export const SANDBOX_CHECK = 'sandbox';
import { OUTPUT_CHECKS, PLAY_CHECKS, SPADE_CHECKS, TOOL_CHECKS } from '../api/spadeRules';

export const ALL_CHECKS: readonly string[] = [...SPADE_CHECKS, ...PLAY_CHECKS, ...TOOL_CHECKS, ...OUTPUT_CHECKS, SANDBOX_CHECK];

/** Whether a check is one of SPADE's own (the only ones that decide SPADE's verdict). */
export function isSpadeCheck(id: string): boolean {
  return id.startsWith('spade.');
}

/**
 * The workbench's overall verdict: every check, SPADE's and the workbench's own stricter ones
 * (numpy scalar types, NaN, 5 s hangs ...). SPADE's verdict is `spadeVerdictOf`, never this.
 */
export function verdictOf(checks: readonly CheckResult[]): Verdict {
  if (checks.some((c) => c.status === 'fail')) return 'fail';
  if (checks.some((c) => c.status === 'warn')) return 'warn';
  return 'pass';
}

/** SPADE accepts a game exactly when none of its own load checks failed; no other check counts. */
export function spadeAccepts(checks: readonly CheckResult[]): boolean {
  return !checks.some((c) => isSpadeCheck(c.id) && c.status === 'fail');
}

/** SPADE's verdict and, on rejection, SPADE's message (its first failed check's, word for word). */
export function spadeVerdictOf(checks: readonly CheckResult[]): { verdict: 'accept' | 'reject'; message: string | null; check: string | null } {
  const failed = checks.find((c) => isSpadeCheck(c.id) && c.status === 'fail');
  return failed ? { verdict: 'reject', message: failed.message, check: failed.id } : { verdict: 'accept', message: null, check: null };
}

/** The workbench's own checks alone (everything but spade.*): reported apart from SPADE's verdict. */
export function workbenchVerdictOf(checks: readonly CheckResult[]): Verdict {
  return verdictOf(checks.filter((c) => !isSpadeCheck(c.id)));
}

export function checkSelected(id: string, wanted: readonly string[] | undefined): boolean {
  if (!wanted || wanted.length === 0) return true;
  return wanted.some((w) => w === id || (w.endsWith('.*') && id.startsWith(w.slice(0, -1))));
}

export function validateCheckIds(ids: readonly string[]): string[] {
  return ids.filter((w) => !(ALL_CHECKS.includes(w) || (w.endsWith('.*') && ALL_CHECKS.some((c) => c.startsWith(w.slice(0, -1))))));
}
