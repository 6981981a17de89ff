import { create } from 'zustand';
import type { EpisodeSummary } from '../../../../core/api/calls/episodes';
import { backend } from '../../store/app';
import { useWorkbench, type PairMode } from '../../store/workbench';
import type { CallInput, CallOutput } from '../../../../core/api';
import { attempt } from '../../store/report';

/** The recorded list's filters, as episodes.list takes them (each narrows, all together). */
export type EpisodeFilters = Pick<CallInput<'episodes.list'>, 'envName' | 'policy' | 'hint' | 'outcome' | 'since' | 'until'>;
type Facets = CallOutput<'episodes.list'>['facets'];

const PAGE = 200;

interface EpisodesState {
  rows: EpisodeSummary[];
  total: number;
  facets: Facets;
  filters: EpisodeFilters;
  loaded: boolean;
  refresh(): Promise<void>;
  setFilters(f: EpisodeFilters): Promise<void>;
  /** The next page of the same filtered list. */
  more(): Promise<void>;
}

/** Only the filters that are set: an unset one must not reach the call as `undefined` or ''. */
function setOnly(f: EpisodeFilters): EpisodeFilters {
  return Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined && v !== '')) as EpisodeFilters;
}

let asked = 0;

export const useEpisodes = create<EpisodesState>((set, get) => ({
  rows: [],
  total: 0,
  facets: { envNames: [], policies: [] },
  filters: {},
  loaded: false,
  refresh: async () => {
    const mine = ++asked;
    // Keep as many rows as are shown, so a refresh after "more" does not shrink the list.
    const limit = Math.min(1000, Math.max(PAGE, get().rows.length));
    // The list's failure was kept here and shown nowhere: it goes to the status bar now. Only the newest ask speaks.
    const r = await attempt('episodes', 'Recorded episodes', () => backend().call('episodes.list', { ...setOnly(get().filters), limit }), { current: () => mine === asked });
    if (mine !== asked) return;
    set(r ? { rows: r.rows, total: r.total, facets: r.facets, loaded: true } : { loaded: true });
  },
  setFilters: async (f) => {
    set({ filters: setOnly(f), rows: [] });
    await get().refresh();
  },
  more: async () => {
    const mine = ++asked;
    const r = await attempt('episodes', 'More recorded episodes', () => backend().call('episodes.list', { ...setOnly(get().filters), limit: PAGE, offset: get().rows.length }), {
      current: () => mine === asked,
    });
    if (r && mine === asked) set((s) => ({ rows: [...s.rows, ...r.rows.filter((x) => !s.rows.some((y) => y.id === x.id))], total: r.total, facets: r.facets }));
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

/** The returns of the segments before the last reset (core/episodes/store.ts refreshTotals keeps them). */
export function earlierReturns(e: Pick<EpisodeSummary, 'meta'>): number[] {
  const r = e.meta.earlierReturns;
  return Array.isArray(r) ? r.filter((x): x is number => typeof x === 'number') : [];
}

/**
 * What "return" means for an episode that was reset again: the return counts from the last reset
 * (SPADE scores one episode from one reset), and the earlier segments' returns are said, not lost.
 */
export function returnNote(e: Pick<EpisodeSummary, 'meta'>): string | null {
  const earlier = earlierReturns(e);
  if (!earlier.length) return null;
  return `since reset ${earlier.length + 1}; before: ${earlier.map((x) => String(Math.round(x * 1000) / 1000)).join(', ')}`;
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
