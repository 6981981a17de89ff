/**
 * What an audit is asked to check and within which limits: the arguments of the harness's `audit`
 * command (runtime/protocol.ts sends them; core/audit reads the reply). Kept in runtime, the layer
 * that talks to the harness, so runtime needs nothing from the audit layer above it.
 */
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

/** What one audit says about one environment (the `audit` command's reply, finished by the host). Check ids and field names are stable: scripts read them. */
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
