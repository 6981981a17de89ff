import { runCommand, useCommands } from './store/commands';
import { useWorkbench } from './store/workbench';

/**
 * Workbench-wide shortcuts, caught in the capture phase so they work while Monaco has focus
 * (Monaco would otherwise swallow Ctrl+S and Ctrl+P).
 */
export function installKeyboard(): () => void {
  const onKey = (e: KeyboardEvent) => {
    const mod = e.ctrlKey || e.metaKey;
    if (!mod) return;
    const key = e.key.toLowerCase();
    if (key === 'p' && e.shiftKey) {
      e.preventDefault();
      e.stopPropagation();
      useCommands.getState().openPalette('commands');
    } else if (key === 'p' && !e.shiftKey && !e.altKey) {
      e.preventDefault();
      e.stopPropagation();
      useCommands.getState().openPalette('quickOpen');
    } else if (key === 's' && !e.shiftKey) {
      e.preventDefault();
      e.stopPropagation();
      void runCommand('editor.save');
    } else if (key === 'j' && !e.shiftKey) {
      e.preventDefault();
      useWorkbench.getState().toggleBottom();
    } else if (key === 'b' && !e.shiftKey) {
      e.preventDefault();
      useWorkbench.getState().toggleSide();
    }
  };
  window.addEventListener('keydown', onKey, true);
  return () => window.removeEventListener('keydown', onKey, true);
}
