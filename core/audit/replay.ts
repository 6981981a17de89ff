/**
 * "Replay" of a check: its evidence played as a recorded episode, exactly as the evidence says
 * (./evidence.ts), in the runtime and mode the audit used. Only the episode that shows the failure
 * stays open; a reference episode is recorded and its session closed at once.
 */
import { DomainError } from '../errors';
import type { EpisodeService } from '../episodes/service';
import type { ReplayRecipe } from './evidence';

export interface EvidenceEpisode {
  episodeId: number;
  /** The step where the check saw the failure (the last one played). */
  step: number;
  /** Reset-leak: the fresh instance's reset(resetSeed) the leaking reset is compared with. */
  referenceId: number | null;
}

export async function playRecipe(episodes: EpisodeService, hash: string, r: ReplayRecipe, label: string): Promise<EvidenceEpisode> {
  const how = { hash, hint: false, runtime: r.runtime, mode: r.mode, maxTurns: r.maxTurns } as const;
  let referenceId: number | null = null;
  if (r.resetSeed !== null) {
    // Like with like, as the check compares: a fresh instance's reset with the leaking reset's seed.
    const ref = await episodes.open({ ...how, seed: r.resetSeed, label: `${label}: fresh reset(seed=${r.resetSeed})` });
    referenceId = ref.episode.id;
    await episodes.close(referenceId);
  }
  const ep = await episodes.open({ ...how, seed: r.seed, label, ...(referenceId !== null ? { resetReference: { episodeId: referenceId, idx: 0 } } : {}) });
  const id = ep.episode.id;
  try {
    let step = 0;
    // Every action of the evidence, as the check played them: none skipped, none added.
    for (const a of r.actions) {
      const got = await episodes.act(id, a, false);
      if (got.episode.id !== id) throw new DomainError('conflict', `replay of the evidence forked episode ${id}`);
      step = got.detail.step.idx;
    }
    if (r.resetSeed !== null) step = (await episodes.resetAgain(id, r.resetSeed)).detail.step.idx;
    return { episodeId: id, step, referenceId };
  } catch (e) {
    await episodes.close(id);
    throw e;
  }
}
