/** What one audit says about one environment. Check ids and field names are stable: scripts read them. */
// What the harness's `audit` command takes and returns lives in runtime (runtime/auditOptions.ts), the
// layer that talks to the harness, so runtime needs nothing from the audit layer above it.
import type { CheckResult, Verdict } from '../runtime/auditOptions';
export type { CheckStatus, Verdict, CheckResult, EnvAudit } from '../runtime/auditOptions';
// The options of the harness's `audit` command: runtime/protocol.ts sends them, so they live below audit.
export type { AuditOptions } from '../runtime/auditOptions';

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
