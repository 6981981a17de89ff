import { settingsSchema, type Settings } from '../api/calls/app';
import type { Db } from './db';

export const defaultSettings: Settings = {
  theme: 'system',
  stepTimeoutSec: 30,
  // SPADE's budget (SpadeConfig.max_turns)
  maxTurns: 30,
  defaultRuntime: 'pyodide',
  auditRuntime: 'pyodide',
  allowUnsandboxedNative: false,
  runMinSuccess: 1,
  spadeSrc: null,
};

/** Settings live in SQLite next to everything else, one JSON value per key. */
export class SettingsStore {
  constructor(private readonly db: Db) {}

  get(): Settings {
    const rows = this.db.prepare('SELECT key, value FROM settings').all() as { key: string; value: string }[];
    const merged: Record<string, unknown> = { ...defaultSettings };
    for (const r of rows) {
      if (!(r.key in defaultSettings)) continue;
      try {
        merged[r.key] = JSON.parse(r.value);
      } catch {
        // A corrupt value falls back to its default rather than making the app unusable.
      }
    }
    const parsed = settingsSchema.safeParse(merged);
    return parsed.success ? parsed.data : { ...defaultSettings };
  }

  update(patch: Partial<Settings>): Settings {
    const next = settingsSchema.parse({ ...this.get(), ...patch });
    const put = this.db.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value');
    this.db.transaction(() => {
      for (const [k, v] of Object.entries(patch)) if (v !== undefined) put.run(k, JSON.stringify(v));
    })();
    return next;
  }
}

/** App bookkeeping kept beside the settings but never shown as one (e.g. "seed pack imported"). */
export function readFlag(db: Db, key: string): boolean {
  return db.prepare('SELECT 1 FROM settings WHERE key = ?').get(key) !== undefined;
}

export function writeFlag(db: Db, key: string, value: unknown): void {
  db.prepare('INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)').run(key, JSON.stringify(value));
}
