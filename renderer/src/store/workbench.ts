import { create } from 'zustand';
import type { MemoryFilters } from '../../../core/api';

export type Activity = 'library' | 'episodes' | 'jobs';

export interface Tab {
  /** Stable identity: opening the same thing twice focuses the existing tab. */
  id: string;
  kind: string;
  title: string;
  params: Record<string, string>;
  dirty?: boolean;
}

interface WorkbenchState {
  activity: Activity;
  sideVisible: boolean;
  bottomVisible: boolean;
  bottomTab: 'problems' | 'logs';
  tabs: Tab[];
  activeTabId: string | null;
  /** A request to show a line in a tab (from Problems, audit evidence...); the view consumes it. */
  reveal: { tabId: string; line: number; nonce: number } | null;
  revealLine(tabId: string, line: number): void;
  /** A request to show the library filtered (from the audit dashboard...); the library consumes it. */
  libraryFilter: { filters: MemoryFilters; nonce: number } | null;
  showInLibrary(filters: MemoryFilters): void;
  setActivity(a: Activity): void;
  toggleSide(): void;
  toggleBottom(): void;
  showBottom(tab: 'problems' | 'logs'): void;
  openTab(tab: Omit<Tab, 'params'> & { params?: Record<string, string> }): void;
  closeTab(id: string): void;
  activateTab(id: string): void;
  markDirty(id: string, dirty: boolean): void;
}

const TABS_KEY = 'spade.tabs.v1';
const WELCOME: Tab = { id: 'welcome', kind: 'welcome', title: 'Welcome', params: {} };

function isTab(x: unknown): x is Tab {
  const t = x as Tab | null;
  return (
    !!t &&
    typeof t.id === 'string' &&
    typeof t.kind === 'string' &&
    typeof t.title === 'string' &&
    !!t.params &&
    typeof t.params === 'object' &&
    Object.values(t.params).every((v) => typeof v === 'string')
  );
}

/** The tabs of the last session in this browser (a reload used to lose them all). */
function restoredTabs(): { tabs: Tab[]; activeTabId: string | null } {
  try {
    const raw = globalThis.localStorage?.getItem(TABS_KEY);
    if (!raw) return { tabs: [WELCOME], activeTabId: WELCOME.id };
    const saved = JSON.parse(raw) as { tabs?: unknown; active?: unknown };
    // Scratch buffers live only in the page: their text is gone after a reload.
    const tabs = (Array.isArray(saved.tabs) ? saved.tabs : []).filter(isTab).filter((t) => t.kind !== 'scratch').map(({ id, kind, title, params }) => ({ id, kind, title, params }));
    const active = typeof saved.active === 'string' && tabs.some((t) => t.id === saved.active) ? saved.active : (tabs[0]?.id ?? null);
    return { tabs, activeTabId: active };
  } catch {
    return { tabs: [WELCOME], activeTabId: WELCOME.id };
  }
}

export const useWorkbench = create<WorkbenchState>((set) => ({
  activity: 'library',
  sideVisible: true,
  bottomVisible: true,
  bottomTab: 'problems',
  ...restoredTabs(),
  reveal: null,
  revealLine: (tabId, line) => set({ reveal: { tabId, line, nonce: Date.now() + Math.random() } }),
  libraryFilter: null,
  showInLibrary: (filters) => set({ libraryFilter: { filters, nonce: Date.now() + Math.random() }, activity: 'library', sideVisible: true }),
  setActivity: (activity) =>
    set((s) => (s.activity === activity && s.sideVisible ? { sideVisible: false } : { activity, sideVisible: true })),
  toggleSide: () => set((s) => ({ sideVisible: !s.sideVisible })),
  toggleBottom: () => set((s) => ({ bottomVisible: !s.bottomVisible })),
  showBottom: (bottomTab) => set({ bottomTab, bottomVisible: true }),
  openTab: (tab) =>
    set((s) => {
      if (s.tabs.some((t) => t.id === tab.id)) return { activeTabId: tab.id };
      return { tabs: [...s.tabs, { params: {}, ...tab }], activeTabId: tab.id };
    }),
  closeTab: (id) =>
    set((s) => {
      const idx = s.tabs.findIndex((t) => t.id === id);
      if (idx < 0) return {};
      const tabs = s.tabs.filter((t) => t.id !== id);
      const activeTabId = s.activeTabId === id ? (tabs[Math.min(idx, tabs.length - 1)]?.id ?? null) : s.activeTabId;
      return { tabs, activeTabId };
    }),
  activateTab: (id) => set({ activeTabId: id }),
  markDirty: (id, dirty) => set((s) => ({ tabs: s.tabs.map((t) => (t.id === id ? { ...t, dirty } : t)) })),
}));

let savedJson = '';
useWorkbench.subscribe((s) => {
  const json = JSON.stringify({ tabs: s.tabs.map(({ id, kind, title, params }) => ({ id, kind, title, params })), active: s.activeTabId });
  if (json === savedJson) return;
  savedJson = json;
  try {
    globalThis.localStorage?.setItem(TABS_KEY, json);
  } catch {
    // Storage full or disabled: tabs just do not survive a reload.
  }
});
