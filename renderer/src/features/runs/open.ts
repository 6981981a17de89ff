import { create } from 'zustand';
import { useWorkbench } from '../../store/workbench';

/** The two runs the Runs page shows (A alone: its detail; A and B: compared). */
export const useRunPick = create<{ a: string | null; b: string | null; pick(a: string | null, b: string | null): void }>((set) => ({
  a: null,
  b: null,
  pick: (a, b) => set({ a, b }),
}));

export function openRuns(a: string | null = null, b: string | null = null): void {
  if (a !== null || b !== null) useRunPick.getState().pick(a, b);
  useWorkbench.getState().openTab({ kind: 'runs', a, b }, 'Runs');
}
