import { create } from 'zustand';
import type { CallOutput, EnvSummary, MemoryFilters, MemorySort } from '../../../../core/api';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';
import { useAuditResults } from '../../store/auditResults';

export const PAGE_SIZE = 200;
type Facets = CallOutput<'memory.facets'>;

interface LibraryState {
  query: string;
  filters: MemoryFilters;
  sort: MemorySort | null;
  total: number;
  /** Pages by index; the table asks for the pages its visible rows fall in, never the whole list. */
  pages: Record<number, EnvSummary[]>;
  generation: number;
  loading: boolean;
  error: string | null;
  facets: Facets | null;
  selected: Record<number, true>;
  /** The stored audit verdict of each listed head version (null: not audited). */
  verdicts: Record<string, 'pass' | 'warn' | 'fail' | null>;
  /** Where each listed environment matches the search (only while there is a query). */
  snippets: Record<number, CallOutput<'memory.snippets'>[number]>;
  importOpen: boolean;
  setQuery(q: string): void;
  setFilters(patch: Partial<MemoryFilters>): void;
  clearFilters(): void;
  /** Replaces the search and every filter at once (one reload). */
  showOnly(filters: MemoryFilters): void;
  setSort(sort: MemorySort | null): void;
  ensurePages(indexes: number[]): void;
  refresh(): void;
  toggleSelected(id: number, on?: boolean): void;
  clearSelection(): void;
  /** Selects every environment the current search matches (up to 100,000); resolves to how many. */
  selectAllMatching(): Promise<{ count: number; truncated: boolean }>;
  setImportOpen(open: boolean): void;
}

const inflight = new Set<string>();

function fetchSnippets(query: string, ids: number[], generation: number): void {
  if (!ids.length) return;
  // Snippets and verdicts decorate rows already shown: a miss leaves them plain.
  void attempt('library', 'Snippets', () => backend().call('memory.snippets', { query, ids }), { quiet: 'warn' }).then((list) => {
    if (!list || useLibrary.getState().generation !== generation) return;
    useLibrary.setState((s) => ({ snippets: { ...s.snippets, ...Object.fromEntries(list.map((x) => [x.id, x])) } }));
  });
}

function fetchVerdicts(hashes: string[]): void {
  if (!hashes.length) return;
  void attempt('library', 'Verdicts', () => backend().call('audit.verdicts', { hashes }), { quiet: 'warn' }).then(
    (list) => list && useLibrary.setState((s) => ({ verdicts: { ...s.verdicts, ...Object.fromEntries(list.map((v) => [v.hash, v.verdict])) } })),
  );
}
let queryTimer: ReturnType<typeof setTimeout> | undefined;

function clean(f: MemoryFilters): MemoryFilters {
  return Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0))) as MemoryFilters;
}

export const useLibrary = create<LibraryState>((set, get) => {
  const reload = () => {
    const generation = get().generation + 1;
    set({ generation, pages: {}, loading: true, error: null, snippets: {} });
    inflight.clear();
    get().ensurePages([0]);
    const { query, filters } = get();
    void attempt('library', 'Facets', () => backend().call('memory.facets', { query, filters: clean(filters) }), { quiet: 'warn' }).then((facets) => {
      if (facets && get().generation === generation) set({ facets });
    });
  };
  return {
    query: '',
    filters: {},
    sort: null,
    total: 0,
    pages: {},
    generation: 0,
    loading: false,
    error: null,
    facets: null,
    selected: {},
    verdicts: {},
    snippets: {},
    importOpen: false,
    setQuery(query) {
      // A selection made for another search must not act, unseen, on this one.
      set({ query, selected: {} });
      clearTimeout(queryTimer);
      // Results as you type, without a request per keystroke.
      queryTimer = setTimeout(reload, 120);
    },
    setFilters(patch) {
      set((s) => ({ filters: clean({ ...s.filters, ...patch }), selected: {} }));
      reload();
    },
    clearFilters() {
      set({ filters: {}, selected: {} });
      reload();
    },
    showOnly(filters) {
      clearTimeout(queryTimer);
      set({ filters: clean(filters), query: '', selected: {} });
      reload();
    },
    setSort(sort) {
      set({ sort });
      reload();
    },
    ensurePages(indexes) {
      const { generation, query, filters, sort, pages } = get();
      for (const index of indexes) {
        const key = `${generation}:${index}`;
        if (pages[index] || inflight.has(key)) continue;
        inflight.add(key);
        // The list's own line shows why a page failed (the page is asked again when scrolled to).
        void attempt('library', 'Search', () => backend().call('memory.search', { query, filters: clean(filters), ...(sort ? { sort } : {}), offset: index * PAGE_SIZE, limit: PAGE_SIZE }), {
          current: () => get().generation === generation,
          show: (message) => set({ loading: false, error: message }),
        }).then((r) => {
          if (!r) return void inflight.delete(key);
          if (get().generation !== generation) return;
          set((s) => ({ total: r.total, pages: { ...s.pages, [index]: r.rows }, loading: false }));
          fetchVerdicts(r.rows.map((x) => x.hash));
          if (query.trim()) fetchSnippets(query, r.rows.map((x) => x.id), generation);
        });
      }
    },
    refresh: reload,
    toggleSelected(id, on) {
      set((s) => {
        const next = { ...s.selected };
        const want = on ?? !next[id];
        if (want) next[id] = true;
        else delete next[id];
        return { selected: next };
      });
    },
    clearSelection: () => set({ selected: {} }),
    async selectAllMatching() {
      const { query, filters } = get();
      const r = await backend().call('memory.matchingIds', { query, filters: clean(filters) });
      const selected: Record<number, true> = {};
      for (const id of r.ids) selected[id] = true;
      set({ selected });
      return { count: r.ids.length, truncated: r.truncated };
    },
    setImportOpen: (importOpen) => set({ importOpen }),
  };
});

export function rowAt(pages: Record<number, EnvSummary[]>, index: number): EnvSummary | undefined {
  return pages[Math.floor(index / PAGE_SIZE)]?.[index % PAGE_SIZE];
}

export function fmt(v: number | null, digits = 2): string {
  return v === null ? '–' : v.toFixed(digits);
}

// An audit finished (here or in a batch): the listed verdicts are refetched.
let seenGeneration = 0;
useAuditResults.subscribe((a) => {
  if (a.generation === seenGeneration) return;
  seenGeneration = a.generation;
  fetchVerdicts(Object.values(useLibrary.getState().pages).flat().map((r) => r.hash));
});
