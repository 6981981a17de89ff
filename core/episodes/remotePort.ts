/**
 * Episodes whose environment another process serves over OpenEnv's protocol (runtime 'openenv'):
 * recorded in the same store as every episode, so the episode view lists, steps, scrubs and
 * replays them; what plays them lives in core/openenv/remoteEpisodes.ts, above this layer, and
 * EpisodeService hands such an episode's calls to it through this port.
 */
import type { ReplayReport, StepDetail, StepView, EpisodeSummary } from '../api/calls/episodes';

/** The value of `episodes.runtime` for an episode played over the wire. */
export const REMOTE_RUNTIME = 'openenv';

export interface StepResult {
  episode: EpisodeSummary;
  steps: StepView[];
  detail: StepDetail;
  forkedFrom: number | null;
}

export interface RemoteEpisodePort {
  /** Opens a session on the server at `url`, resets it and starts a record: the new episode's id. */
  open(o: { url: string; seed: number | null; hint: boolean; env?: string; maxTurns?: number; label?: string; signal?: AbortSignal }): Promise<number>;
  /** Where the episode's live session stands (its last step), or null when it has none. */
  cursor(id: number): number | null;
  act(id: number, text: string, signal?: AbortSignal): Promise<StepResult>;
  resetAgain(id: number, seed: number | null | undefined, signal?: AbortSignal): Promise<StepResult>;
  replay(id: number, signal?: AbortSignal): Promise<ReplayReport>;
  close(id: number): Promise<boolean>;
  closeAll(): Promise<void>;
}
