import type { CallOutput } from '../../../../core/api';
import { backend } from '../../store/app';
import { useWorkbench } from '../../store/workbench';

type Check = NonNullable<CallOutput<'audit.results'>>['checks'][number];

/** Whether the evidence holds enough (a seed and actions) to re-play the failing episode. */
export function canReplay(c: Check): boolean {
  const seed = c.evidence.seed;
  return (c.status === 'fail' || c.status === 'warn') && typeof seed === 'number' && Array.isArray(c.evidence.actions);
}

/**
 * Plays a check's evidence on a version as a recorded episode: the same seed and actions and, for a
 * leak, the second reset on the same instance, compared like with like with a fresh instance's
 * reset of that seed (recorded first, as the check compares). Answers where the failure shows.
 */
export async function playEvidence(hash: string, c: Check): Promise<{ episodeId: number; step: number }> {
  const ev = c.evidence;
  const actions = (ev.actions as unknown[]).filter((a): a is string => typeof a === 'string');
  const firstSeed = typeof ev.firstSeed === 'number' ? ev.firstSeed : null;
  const seed = ev.seed as number;
  const api = backend();
  const reference =
    firstSeed !== null ? (await api.call('episodes.open', { hash, seed, runtime: 'cpython', label: `audit ${c.id}: fresh reset(seed=${seed})` })).episode.id : null;
  let ep = await api.call('episodes.open', {
    hash,
    seed: firstSeed ?? seed,
    runtime: 'cpython',
    label: `audit ${c.id}`,
    ...(reference !== null ? { resetReference: { episodeId: reference, idx: 0 } } : {}),
  });
  for (const a of actions) {
    const last = ep.steps.at(-1);
    if (last && (last.terminated || last.truncated || last.error)) break;
    ep = await api.call('episodes.act', { id: ep.episode.id, action: a });
  }
  if (firstSeed !== null) ep = await api.call('episodes.resetAgain', { id: ep.episode.id, seed });
  // act and resetAgain answer with the new steps only, so take the last one's own index.
  return { episodeId: ep.episode.id, step: ep.steps.at(-1)?.idx ?? 0 };
}

/** Opens the failing episode in the episodes view, at the step where the check saw the failure. */
export async function replayCheck(hash: string, c: Check, envName: string): Promise<void> {
  const { episodeId, step } = await playEvidence(hash, c);
  useWorkbench.getState().openTab({ kind: 'episode', episodeId, step }, `#${episodeId} ${envName} (${c.id})`);
}

/** The same evidence on the version before a fix and on this one, side by side: the fix shown, step by step. */
export async function replayBeforeAfter(before: string, after: string, c: Check, envName: string): Promise<void> {
  const a = await playEvidence(before, c);
  const b = await playEvidence(after, c);
  useWorkbench
    .getState()
    .openTab({ kind: 'episode-pair', a: a.episodeId, b: b.episodeId, mode: 'versions', idx: Math.max(a.step, b.step) }, `${envName} (${c.id}): before / after`);
}
