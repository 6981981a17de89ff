import { create } from 'zustand';
import { attempt } from './report';

export interface Command {
  id: string;
  title: string;
  category: string;
  /** Shown in the palette; the binding itself is handled by the keyboard module. */
  keybinding?: string;
  run(): void | Promise<void>;
}

interface CommandState {
  commands: Record<string, Command>;
  paletteOpen: boolean;
  paletteMode: 'commands' | 'quickOpen';
  register(cmds: Command[]): () => void;
  openPalette(mode?: 'commands' | 'quickOpen'): void;
  closePalette(): void;
}

/** Every user action is a command, so the palette, menus and shortcuts reach the same code. */
export const useCommands = create<CommandState>((set) => ({
  commands: {},
  paletteOpen: false,
  paletteMode: 'commands',
  register(cmds) {
    set((s) => ({ commands: { ...s.commands, ...Object.fromEntries(cmds.map((c) => [c.id, c])) } }));
    return () =>
      set((s) => {
        const next = { ...s.commands };
        for (const c of cmds) if (next[c.id] === c) delete next[c.id];
        return { commands: next };
      });
  },
  openPalette: (mode = 'commands') => set({ paletteOpen: true, paletteMode: mode }),
  closePalette: () => set({ paletteOpen: false }),
}));

/** Runs a command from a shortcut or a menu; a failure is said the one way (report.ts), as from the palette. */
export async function runCommand(id: string): Promise<void> {
  const cmd = useCommands.getState().commands[id];
  if (cmd) await attempt('command', `${cmd.category}: ${cmd.title}`, async () => cmd.run());
}

/** Subsequence match scored by how early and how contiguous the hits are. */
export function fuzzyScore(query: string, text: string): number {
  const q = query.toLowerCase().trim();
  if (!q) return 1;
  const t = text.toLowerCase();
  let score = 0;
  let ti = 0;
  let streak = 0;
  for (const ch of q) {
    const found = t.indexOf(ch, ti);
    if (found < 0) return 0;
    streak = found === ti ? streak + 1 : 0;
    score += 1 + streak * 2 - Math.min(found - ti, 10) * 0.1;
    ti = found + 1;
  }
  return score;
}
