import type { CallOutput } from '../../../../core/api';
import { backend } from '../../store/app';
import { useWorkbench } from '../../store/workbench';

type Check = NonNullable<CallOutput<'audit.results'>>['checks'][number];

function isSeed(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

/** Whether the evidence names an episode (a seed and the actions after its reset) to re-play. */
export function canReplay(c: Check): boolean {
  return (c.status === 'fail' || c.status === 'warn') && isSeed(c.evidence.seed) && Array.isArray(c.evidence.actions);
}

/**
 * What "Replay" plays, in words, from the evidence alone: the seed, the actions, a leak's second
 * reset, and where and how the audit ran. Evidence stored before it said the episode's seed as
 * `firstSeed` (and the leaking reset's as `seed`) reads the same way the engine reads it.
 */
export function replayPlan(c: Check): string {
  const ev = c.evidence;
  const legacy = isSeed(ev.firstSeed) && !isSeed(ev.resetSeed);
  const seed = legacy ? ev.firstSeed : ev.seed;
  const resetSeed = legacy ? ev.seed : isSeed(ev.resetSeed) ? ev.resetSeed : null;
  const n = Array.isArray(ev.actions) ? ev.actions.length : 0;
  const parts = [`reset(seed=${String(seed)})`, `${n} action${n === 1 ? '' : 's'}`];
  if (resetSeed !== null) parts.push(`reset(seed=${String(resetSeed)}) on the same instance`);
  const where = [typeof ev.runtime === 'string' ? (ev.runtime === 'pyodide' ? 'Pyodide' : 'CPython') : null, typeof ev.mode === 'string' ? `${ev.mode} mode` : null].filter(Boolean);
  return `${parts.join(', then ')}${where.length ? ` · ${where.join(', ')}` : ''}`;
}

/** Plays a check's evidence on a version (the audited one, or `on`) as a recorded episode. */
async function playEvidence(hash: string, c: Check, on?: string): Promise<{ episodeId: number; step: number }> {
  const r = await backend().call('audit.replay', { hash, checkId: c.id, ...(on ? { on } : {}) });
  return { episodeId: r.episodeId, step: r.step };
}

/** Opens the failing episode in the episodes view, at the step where the check saw the failure. */
export async function replayCheck(hash: string, c: Check, envName: string): Promise<void> {
  const { episodeId, step } = await playEvidence(hash, c);
  useWorkbench.getState().openTab({ kind: 'episode', episodeId, step }, `#${episodeId} ${envName} (${c.id})`);
}

/** The evidence of the version before a fix played on it and on this one, side by side: the fix shown, step by step. */
export async function replayBeforeAfter(before: string, after: string, c: Check, envName: string): Promise<void> {
  const a = await playEvidence(before, c);
  const b = await playEvidence(before, c, after);
  useWorkbench
    .getState()
    .openTab({ kind: 'episode-pair', a: a.episodeId, b: b.episodeId, mode: 'versions', idx: Math.max(a.step, b.step) }, `${envName} (${c.id}): before / after`);
}
