import { create } from 'zustand';
import type { MemoryFilters } from '../../../core/api';

export type Activity = 'library' | 'episodes' | 'jobs';

/** What two episodes side by side are: without/with the hint, a recording and its re-execution, or one audit evidence on the version before a fix and after it. */
export type PairMode = 'hint' | 'divergence' | 'versions' | 'models';

/**
 * What a tab shows, one variant per kind with its own typed fields. An environment is always
 * `envId` (it was `id` in some kinds and `envId` in others), and the tab's id is derived from the
 * target by `tabId` alone, so "open the same thing twice" always finds the existing tab.
 */
export type TabTarget =
  | { kind: 'welcome' }
  | { kind: 'settings' }
  | { kind: 'scratch'; n: number }
  | { kind: 'environment'; envId: number }
  | { kind: 'editor'; envId: number }
  | { kind: 'editor-diff'; envId: number; left: string; right: string }
  | { kind: 'editor-new'; mode: 'game' | 'tool-use' | 'paste' | 'file' }
  | { kind: 'editor-export' }
  | { kind: 'write-back'; envId: number }
  | { kind: 'audit'; envId: number }
  | { kind: 'audit-dashboard' }
  | { kind: 'episode'; episodeId: number; step?: number }
  | { kind: 'episode-pair'; a: number; b: number; mode: PairMode; idx: number }
  | { kind: 'episode-regret'; hash: string; name: string }
  | { kind: 'episode-llm'; hash: string; name: string }
  | { kind: 'job'; jobId: string }
  | { kind: 'runs'; a: string | null; b: string | null }
  | { kind: 'design'; parentEnvId: number | null; parentName: string | null }
  | { kind: 'openenv' }
  | { kind: 'openenv-remote'; url: string };
export type TabKind = TabTarget['kind'];
export type TargetOf<K extends TabKind> = Extract<TabTarget, { kind: K }>;

export function tabId(t: TabTarget): string {
  switch (t.kind) {
    case 'welcome':
    case 'settings':
    case 'editor-new':
    case 'editor-export':
    case 'audit-dashboard':
    case 'openenv':
    case 'openenv-remote':
      return t.kind;
    case 'scratch':
      return `scratch:${t.n}`;
    case 'environment':
      return `env:${t.envId}`;
    case 'editor':
    case 'write-back':
    case 'audit':
      return `${t.kind}:${t.envId}`;
    case 'editor-diff':
      return `editor-diff:${t.envId}:${t.left}:${t.right}`;
    case 'episode':
      return `episode:${t.episodeId}`;
    case 'episode-pair':
      return `episode-pair:${t.a}:${t.b}`;
    case 'episode-regret':
      return `episode-regret:${t.hash}`;
    case 'episode-llm':
      return `episode-llm:${t.hash}`;
    case 'job':
      return `job:${t.jobId}`;
    case 'runs':
      // One Runs page: opening it again (another run) retargets it.
      return 'runs';
    case 'design':
      // One Design page, and one variants page per parent environment.
      return t.parentEnvId === null ? 'design' : `design:variants:${t.parentEnvId}`;
  }
}

/** The environment a tab is about, if any (commands such as "Audit This Environment" use it). */
export function envIdOf(t: TabTarget | undefined): number | null {
  return t && 'envId' in t ? t.envId : null;
}

export interface Tab {
  /** tabId(target): never chosen by callers. */
  id: string;
  title: string;
  target: TabTarget;
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
  openTab(target: TabTarget, title: string): void;
  closeTab(id: string): void;
  activateTab(id: string): void;
  markDirty(id: string, dirty: boolean): void;
}

const TABS_KEY = 'spade.tabs.v2';
const WELCOME: Tab = { id: 'welcome', title: 'Welcome', target: { kind: 'welcome' } };

/** A saved tab read back: its target must still be a valid one (the id is derived again). */
function restoreTab(x: unknown): Tab | null {
  const t = x as { title?: unknown; target?: Record<string, unknown> } | null;
  if (!t || typeof t.title !== 'string' || !t.target || typeof t.target.kind !== 'string') return null;
  const target = t.target as unknown as TabTarget;
  const nums = ['envId', 'n', 'episodeId', 'a', 'b', 'idx'].filter((k) => k in t.target!);
  if (nums.some((k) => !Number.isInteger(t.target![k]))) return null;
  try {
    const id = tabId(target);
    return typeof id === 'string' && !id.includes('undefined') ? { id, title: t.title, target } : null;
  } catch {
    return null;
  }
}

/** The tabs of the last session in this browser (a reload used to lose them all). */
function restoredTabs(): { tabs: Tab[]; activeTabId: string | null } {
  try {
    const raw = globalThis.localStorage?.getItem(TABS_KEY);
    if (!raw) return { tabs: [WELCOME], activeTabId: WELCOME.id };
    const saved = JSON.parse(raw) as { tabs?: unknown; active?: unknown };
    // Scratch buffers live only in the page: their text is gone after a reload.
    const tabs = (Array.isArray(saved.tabs) ? saved.tabs : [])
      .map(restoreTab)
      .filter((t): t is Tab => t !== null && t.target.kind !== 'scratch');
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
  openTab: (target, title) =>
    set((s) => {
      const id = tabId(target);
      if (s.tabs.some((t) => t.id === id)) return { activeTabId: id };
      return { tabs: [...s.tabs, { id, title, target }], activeTabId: id };
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
  const json = JSON.stringify({ tabs: s.tabs.map(({ title, target }) => ({ title, target })), active: s.activeTabId });
  if (json === savedJson) return;
  savedJson = json;
  try {
    globalThis.localStorage?.setItem(TABS_KEY, json);
  } catch {
    // Storage full or disabled: tabs just do not survive a reload.
  }
});
