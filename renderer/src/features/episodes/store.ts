import { create } from 'zustand';
import type { EpisodeSummary } from '../../../../core/api/calls/episodes';
import { backend } from '../../store/app';
import { useWorkbench, type PairMode } from '../../store/workbench';
import { errorMessage } from '../../../../core/api';

interface EpisodesState {
  rows: EpisodeSummary[];
  total: number;
  loaded: boolean;
  error: string | null;
  refresh(): Promise<void>;
}

export const useEpisodes = create<EpisodesState>((set) => ({
  rows: [],
  total: 0,
  loaded: false,
  error: null,
  refresh: async () => {
    try {
      const r = await backend().call('episodes.list', { limit: 300 });
      set({ rows: r.rows, total: r.total, loaded: true, error: null });
    } catch (e) {
      set({ error: errorMessage(e), loaded: true });
    }
  },
}));

let subscribers = 0;
let off: (() => void) | null = null;

/** The list follows episodes.changed while at least one component shows it. */
export function subscribeEpisodes(): () => void {
  subscribers++;
  if (!off) {
    let timer: ReturnType<typeof setTimeout> | null = null;
    off = backend().on('episodes.changed', () => {
      if (timer) return;
      timer = setTimeout(() => {
        timer = null;
        void useEpisodes.getState().refresh();
      }, 1000);
    });
  }
  void useEpisodes.getState().refresh();
  return () => {
    subscribers--;
    if (subscribers === 0 && off) {
      off();
      off = null;
    }
  };
}

export function episodeTitle(e: Pick<EpisodeSummary, 'id' | 'envName' | 'className' | 'seed' | 'hintEnabled'>): string {
  return `#${e.id} ${e.envName ?? e.className ?? 'episode'} s${e.seed ?? '?'}${e.hintEnabled ? ' +hint' : ''}`;
}

export function openEpisode(e: Pick<EpisodeSummary, 'id' | 'envName' | 'className' | 'seed' | 'hintEnabled'>): void {
  useWorkbench.getState().openTab({ kind: 'episode', episodeId: e.id }, episodeTitle(e));
}

export function openPair(a: number, b: number, mode: PairMode, title: string, idx = 0): void {
  useWorkbench.getState().openTab({ kind: 'episode-pair', a, b, mode, idx }, title);
}

export function openRegret(hash: string, name: string): void {
  useWorkbench.getState().openTab({ kind: 'episode-regret', hash, name }, `Regret: ${name}`);
}

export function openLlm(hash: string, name: string): void {
  useWorkbench.getState().openTab({ kind: 'episode-llm', hash, name }, `Model: ${name}`);
}
