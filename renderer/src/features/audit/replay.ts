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
 * Opens the failing episode in the episodes view: a recorded episode with the same seed and
 * actions (and, for a leak, the second reset on the same instance), so it stops at the failing step.
 */
export async function replayCheck(hash: string, c: Check, envName: string): Promise<void> {
  const ev = c.evidence;
  const actions = (ev.actions as unknown[]).filter((a): a is string => typeof a === 'string');
  const firstSeed = typeof ev.firstSeed === 'number' ? ev.firstSeed : null;
  const seed = ev.seed as number;
  const api = backend();
  let ep = await api.call('episodes.open', { hash, seed: firstSeed ?? seed, runtime: 'cpython', label: `audit ${c.id}` });
  for (const a of actions) {
    const last = ep.steps.at(-1);
    if (last && (last.terminated || last.truncated || last.error)) break;
    ep = await api.call('episodes.act', { id: ep.episode.id, action: a });
  }
  if (firstSeed !== null) ep = await api.call('episodes.resetAgain', { id: ep.episode.id, seed });
  const id = ep.episode.id;
  // Open at the last step played: that is where the check saw the failure.
  // (act and resetAgain answer with the new steps only, so take the last one's own index.)
  const step = ep.steps.at(-1)?.idx ?? 0;
  useWorkbench.getState().openTab({ kind: 'episode', episodeId: id, step }, `#${id} ${envName} (${c.id})`);
}
