/**
 * What a check's evidence replays, said by the evidence itself so that "Replay" plays exactly what
 * the check played: the seed of the episode's reset, every action after it, for reset-leak the
 * reset of the same instance that shows the leak, and where and how the audit ran (runtime, the
 * way the instance was made and seeded, the turn budget). The checks write seed and actions
 * (native/audit_checks.py); the host adds runtime, mode and maxTurns, which only it knows.
 */
import type { PlayMode } from '../episodes/session';
import type { AuditOptions, CheckResult, EnvAudit } from './types';
import type { RuntimeKind } from '../api/schemas';

export interface ReplayRecipe {
  /** The seed of the replayed episode's (first) reset. */
  seed: number;
  /** Every action played after that reset, in order, as the check played them. */
  actions: string[];
  /** Reset-leak: after the actions, reset the same instance with this seed; the leak shows there. */
  resetSeed: number | null;
  runtime: RuntimeKind;
  mode: PlayMode;
  maxTurns: number;
}

/**
 * How each check made the instance it played (native/audit_checks.py): reset-leak uses fresh
 * instances and seeds `random` before every reset (preseed), determinism and crash-on-action use
 * fresh instances unseeded (aliasing too); the other checks play an instance loaded as SPADE loads it.
 */
const CHECK_MODES: Readonly<Record<string, PlayMode>> = { 'reset-leak': 'deterministic', determinism: 'fresh', aliasing: 'fresh', 'crash-on-action': 'fresh' };

const DEFAULT_MAX_TURNS = 30;

function isSeed(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

function isMode(v: unknown): v is PlayMode {
  return v === 'spade' || v === 'fresh' || v === 'deterministic';
}

/** Evidence that names one episode: a seed and the actions played after its reset. */
function replayable(ev: Record<string, unknown>): boolean {
  return isSeed(ev.seed) && Array.isArray(ev.actions) && ev.actions.every((a) => typeof a === 'string');
}

/** The audit with runtime, mode and maxTurns added to every evidence that can be replayed. */
export function stampEvidence(a: EnvAudit, runtime: RuntimeKind, options: AuditOptions): EnvAudit {
  const maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
  return {
    ...a,
    checks: a.checks.map((c) =>
      replayable(c.evidence) ? { ...c, evidence: { ...c.evidence, runtime, mode: isMode(c.evidence.mode) ? c.evidence.mode : (CHECK_MODES[c.id] ?? 'spade'), maxTurns } } : c,
    ),
  };
}

/**
 * The episode a check's evidence replays, or null when it names none. Evidence stored before it
 * said runtime and mode takes them from the stored audit (`fallback`) and the check; reset-leak
 * evidence of that time said the episode's seed as `firstSeed` and the leaking reset's as `seed`.
 */
export function replayRecipe(c: Pick<CheckResult, 'id' | 'evidence'>, fallback: { runtime: RuntimeKind | null; maxTurns?: number } = { runtime: null }): ReplayRecipe | null {
  const ev = c.evidence;
  if (!replayable(ev)) return null;
  const legacyLeak = isSeed(ev.firstSeed) && !isSeed(ev.resetSeed);
  const seed = legacyLeak ? (ev.firstSeed as number) : (ev.seed as number);
  const resetSeed = legacyLeak ? (ev.seed as number) : isSeed(ev.resetSeed) ? ev.resetSeed : null;
  const runtime = ev.runtime === 'pyodide' || ev.runtime === 'cpython' ? ev.runtime : (fallback.runtime ?? 'cpython');
  const maxTurns = typeof ev.maxTurns === 'number' && Number.isInteger(ev.maxTurns) && ev.maxTurns > 0 ? ev.maxTurns : (fallback.maxTurns ?? DEFAULT_MAX_TURNS);
  return { seed, actions: ev.actions as string[], resetSeed, runtime, mode: isMode(ev.mode) ? ev.mode : (CHECK_MODES[c.id] ?? 'spade'), maxTurns };
}

/** Whether a check offers replay: it failed or warned and its evidence names an episode. */
export function offersReplay(c: Pick<CheckResult, 'id' | 'status' | 'evidence'>): boolean {
  return (c.status === 'fail' || c.status === 'warn') && replayRecipe(c) !== null;
}
