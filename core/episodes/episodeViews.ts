/**
 * What a reader sees of a recorded episode: its summary row (live or not, where the live session
 * stands), its steps, and the inspector's detail of one step.
 */
import { DomainError } from '../errors';
import type { EpisodeSummary, StepDetail, StepView } from '../api/calls/episodes';
import type { EpisodeContext } from './context';
import { diffLines, diffStates, type StateTree } from './stateDiff';
import { toViews, type EpisodeMeta, type StepRecord } from './episodeStore';

/** `cursor`: where the episode's live session stands, null when nothing is live. */
export function summaryOf(m: EpisodeMeta, cursor: number | null): EpisodeSummary {
  return { ...m, live: cursor !== null, cursor };
}

export function episodeView(ctx: EpisodeContext, id: number, cursor: number | null): { episode: EpisodeSummary; steps: StepView[] } {
  const m = ctx.meta(id);
  return { episode: summaryOf(m, cursor), steps: toViews(m, ctx.d.store.steps(id)) };
}

/** The inspector's view of step idx: its state, what changed since the step before, and the reset it is compared with. */
export function stepDetail(ctx: EpisodeContext, id: number, idx: number): StepDetail {
  const store = ctx.d.store;
  const m = ctx.meta(id);
  const cur = store.step(id, idx);
  if (!cur) throw new DomainError('not_found', `Episode ${id} has no step ${idx} (it has ${m.stepCount})`);
  const prev = idx > 0 ? store.step(id, idx - 1) : null;
  const view = store.viewsRange(m, idx, idx)[0]!;
  const ref = cur.kind === 'reset' ? sameSeedReset(ctx, m, cur) : null;
  return {
    step: view,
    state: cur.state ?? null,
    changes: prev ? diffStates(prev.state as StateTree, cur.state as StateTree) : [],
    changesFromSameSeedReset: ref ? diffStates(ref.record.state as StateTree, cur.state as StateTree) : null,
    comparedReset: ref?.at ?? null,
    observationDiff: prev && prev.observation !== null && cur.observation !== null ? diffLines(prev.observation, cur.observation) : [],
  };
}

/**
 * What a reset is compared with to show leaking state, like with like: the latest earlier reset
 * with the same seed in this episode, else the reference reset the episode was opened against
 * (a fresh instance's reset with that seed, as the audit's reset-leak check compares).
 */
function sameSeedReset(ctx: EpisodeContext, m: EpisodeMeta, cur: StepRecord): { record: StepRecord; at: NonNullable<StepDetail['comparedReset']> } | null {
  const store = ctx.d.store;
  const earlier = store
    .steps(m.id)
    .filter((s) => s.kind === 'reset' && s.idx < cur.idx && s.seed === cur.seed)
    .at(-1);
  if (earlier) {
    const record = store.step(m.id, earlier.idx);
    if (record) return { record, at: { episodeId: m.id, idx: earlier.idx, seed: cur.seed, sameEpisode: true } };
  }
  const r = m.meta.resetReference as { episodeId?: unknown; idx?: unknown } | undefined;
  if (!r || typeof r.episodeId !== 'number' || typeof r.idx !== 'number') return null;
  const record = store.step(r.episodeId, r.idx);
  if (!record || record.kind !== 'reset' || record.seed !== cur.seed) return null;
  return { record, at: { episodeId: r.episodeId, idx: r.idx, seed: cur.seed, sameEpisode: false } };
}
