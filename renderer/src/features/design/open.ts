import { create } from 'zustand';
import { useWorkbench } from '../../store/workbench';

/** The round each Design tab shows (by tab id), kept while the tab is away. */
export const useDesignPick = create<{ picked: Record<string, string | null>; pick(tab: string, round: string | null): void }>((set) => ({
  picked: {},
  pick: (tab, round) => set((s) => ({ picked: { ...s.picked, [tab]: round } })),
}));

export function openDesign(round: string | null = null): void {
  if (round) useDesignPick.getState().pick('design', round);
  useWorkbench.getState().openTab({ kind: 'design', parentEnvId: null, parentName: null }, 'Design');
}

/** "Make variants": a Design page whose only seed is this environment. */
export function openVariants(envId: number, name: string): void {
  useWorkbench.getState().openTab({ kind: 'design', parentEnvId: envId, parentName: name }, `Variants of ${name}`);
}
