import { ProgressLine, useNow } from '../../components/ProgressLine';
import type { EpisodeWork } from './useEpisode';

/** Waits shorter than this are not worth a line (a step usually answers in milliseconds). */
const SHOW_AFTER_MS = 1000;

/** An episode's work in progress, shown once it has taken a second: what, how long, Cancel. */
export function WorkProgress({ work, onCancel, testId = 'ep-work' }: { work: EpisodeWork | null; onCancel(): void; testId?: string }) {
  const now = useNow(work !== null, 250);
  if (!work || now - work.startedAt < SHOW_AFTER_MS) return null;
  return <ProgressLine label={work.label} startedAt={work.startedAt} detail={work.detail} onCancel={onCancel} cancelling={work.cancelling} testId={testId} />;
}
