import { readFileSync, writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';

export interface WindowState {
  x?: number;
  y?: number;
  width: number;
  height: number;
  maximized: boolean;
}

const fallback: WindowState = { width: 1400, height: 900, maximized: false };

export function loadWindowState(dir: string): WindowState {
  try {
    const raw = JSON.parse(readFileSync(join(dir, 'window-state.json'), 'utf8')) as Partial<WindowState>;
    if (typeof raw.width === 'number' && typeof raw.height === 'number') {
      return { ...fallback, ...raw, width: Math.max(640, raw.width), height: Math.max(400, raw.height) };
    }
  } catch {
    // first start or unreadable file: use defaults
  }
  return fallback;
}

export function saveWindowState(dir: string, state: WindowState): void {
  const file = join(dir, 'window-state.json');
  writeFileSync(`${file}.tmp`, JSON.stringify(state));
  renameSync(`${file}.tmp`, file);
}
