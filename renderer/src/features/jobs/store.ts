import { create } from 'zustand';
import type { JobSummary } from '../../../../core/api/calls/jobs';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';

interface JobsState {
  jobs: JobSummary[];
  launchOpen: boolean;
  loaded: boolean;
  refresh(): Promise<void>;
  upsert(j: JobSummary): void;
  setLaunchOpen(open: boolean): void;
}

export const useJobs = create<JobsState>((set) => ({
  jobs: [],
  launchOpen: false,
  loaded: false,
  refresh: async () => {
    const r = await attempt('jobs', 'Could not list jobs', () => backend().call('jobs.list', {}));
    if (r) set({ jobs: r.jobs, loaded: true });
  },
  upsert: (j) =>
    set((s) => {
      const i = s.jobs.findIndex((x) => x.id === j.id);
      if (i < 0) return { jobs: [j, ...s.jobs] };
      const jobs = s.jobs.slice();
      jobs[i] = j;
      return { jobs };
    }),
  setLaunchOpen: (launchOpen) => set({ launchOpen }),
}));

let subscribed = false;
/** One subscription for the whole UI; the WebSocket may reconnect, so the list is reloaded then. */
export function subscribeJobs(): void {
  if (subscribed) return;
  subscribed = true;
  backend().on('jobs.changed', (j) => useJobs.getState().upsert(j));
  backend().onConnection((s) => {
    if (s === 'connected') void useJobs.getState().refresh();
  });
  void useJobs.getState().refresh();
}

export const STATE_ICON: Record<JobSummary['state'], string> = {
  submitting: '…',
  pending: '◷',
  running: '▶',
  suspended: '⏸',
  succeeded: '✓',
  failed: '✗',
  cancelled: '■',
  timeout: '⌛',
  lost: '?',
};
