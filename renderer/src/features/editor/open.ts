import { backend, log } from '../../store/app';
import { useWorkbench } from '../../store/workbench';
import { type EditorSession } from './session';
import { attempt } from '../../store/report';

export type DiffSide = { hash: string } | { draft: number };

/** Opening an environment twice focuses its tab: one buffer per environment. */
export function openEditor(envId: number, name: string): void {
  useWorkbench.getState().openTab({ kind: 'editor', envId }, name);
}

function sideKey(s: DiffSide): string {
  return 'hash' in s ? s.hash : 'draft';
}

export function openDiff(envId: number, left: DiffSide, right: DiffSide, name: string): void {
  const l = sideKey(left);
  const r = sideKey(right);
  const short = (k: string) => (k === 'draft' ? 'draft' : k.slice(0, 7));
  useWorkbench.getState().openTab({ kind: 'editor-diff', envId, left: l, right: r }, `${name} ${short(l)}↔${short(r)}`);
}

export async function forkEnvironment(session: EditorSession): Promise<void> {
  const source = session.dirty ? session.currentSource() : undefined;
  const r = await attempt('editor', 'Fork failed', () => backend().call('editor.fork', { envId: session.env.id, hash: session.baseHash, ...(source ? { source } : {}) }));
  if (!r) return;
  log('info', 'editor', `Forked ${session.env.name} as environment ${r.envId}`);
  openEditor(r.envId, `${session.env.name} (fork)`);
}

export function openExport(): void {
  useWorkbench.getState().openTab({ kind: 'editor-export' }, 'Export Seed Set');
}

export function openNewEnvironment(mode: 'game' | 'tool-use' | 'paste' | 'file' = 'game'): void {
  useWorkbench.getState().openTab({ kind: 'editor-new', mode }, 'New Environment');
}

/** Sending a fixed version back to the file it came from (diff first), as a patch, or exported. */
export function openWriteBack(envId: number, name: string): void {
  useWorkbench.getState().openTab({ kind: 'write-back', envId }, `Write back: ${name}`);
}
