/**
 * Numbered, append-only. A migration that has shipped is never edited: its checksum is stored
 * when applied and checked at every open, so an edited one is caught instead of silently skipped.
 * Later features append their own entries (environments, audits, episodes, jobs...).
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const migrations: Migration[] = [
  {
    version: 1,
    name: 'settings',
    sql: `
      CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) STRICT;
    `,
  },
];
