import { create } from 'zustand';
import type { Backend, CallOutput, Settings } from '../../../core/api';
import type { TabTarget } from './workbench';
import { attempt } from './report';

export interface LogLine {
  time: string;
  level: 'debug' | 'info' | 'warn' | 'error';
  source: string;
  message: string;
}

export interface Problem {
  id: string;
  severity: 'error' | 'warning' | 'info';
  message: string;
  source: string;
  /** Where clicking the problem leads (e.g. an environment tab and line). */
  target?: { tab: TabTarget; line?: number; title?: string };
}

interface AppState {
  backend: Backend | null;
  connection: 'connecting' | 'connected' | 'reconnecting' | 'closed';
  info: CallOutput<'app.info'> | null;
  health: CallOutput<'app.health'> | null;
  settings: Settings | null;
  logs: LogLine[];
  problems: Record<string, Problem[]>;
  setProblems(owner: string, list: Problem[]): void;
  addLog(line: LogLine): void;
}

const MAX_LOG_LINES = 5000;

export const useApp = create<AppState>((set) => ({
  backend: null,
  connection: 'connecting',
  info: null,
  health: null,
  settings: null,
  logs: [],
  problems: {},
  setProblems: (owner, list) => set((s) => ({ problems: { ...s.problems, [owner]: list } })),
  addLog: (line) => set((s) => ({ logs: s.logs.length >= MAX_LOG_LINES ? [...s.logs.slice(-MAX_LOG_LINES + 1), line] : [...s.logs, line] })),
}));

/** The backend, for code that runs after start-up (it is set before the first render). */
export function backend(): Backend {
  const b = useApp.getState().backend;
  if (!b) throw new Error('Backend not initialised');
  return b;
}

export function log(level: LogLine['level'], source: string, message: string): void {
  useApp.getState().addLog({ time: new Date().toISOString(), level, source, message });
}

export async function refreshHealth(): Promise<void> {
  // Polled every few seconds: an engine that cannot answer shows as the banner's "no health", not as a notice each time.
  const health = await attempt('app', 'Health', () => backend().call('app.health', {}), { quiet: 'none' });
  useApp.setState({ health: health ?? null });
}

let settingsCalls = 0;

export async function updateSettings(patch: Partial<Settings>): Promise<void> {
  const before = useApp.getState().settings;
  const call = ++settingsCalls;
  // Shown at once: a control that waited for the engine's answer looked, on a busy machine, as if
  // the click had not taken. The answer (or, if it fails, what was there, and the failure is
  // reported) replaces it, unless a later change is already on its way.
  if (before) useApp.setState({ settings: { ...before, ...patch } });
  const settings = await attempt('app', 'Settings', () => backend().call('settings.update', patch));
  if (call !== settingsCalls) return;
  if (settings) useApp.setState({ settings });
  else if (before) useApp.setState({ settings: before });
}
