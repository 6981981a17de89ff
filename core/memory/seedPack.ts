/**
 * The seed pack's first-start import, shared by the app (MemoryService, in its import worker) and the
 * CLI commands that need a library to act on (`train` on a new data dir): a new user's library is
 * never empty. The pack's own files mark every environment `seed` and tag it `seed`
 * (resources/seed-pack/README.md), so `seed`, `is:seed` and `tag:seed` select it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ImportSummary } from '../api';
import type { Db } from './db';
import { importPaths } from './importer';
import { environmentCount } from './repository';
import { packageRoot } from '../base/appInfo';
import { readFlag, writeFlag } from './settingsStore';

export const SEED_FLAG = 'memory.seedPackImported';

export const seedPackDir = (): string => join(packageRoot(), 'resources', 'seed-pack');

/** Due once: the pack is there, it was never imported, and the library is empty (deleting everything later does not bring it back). */
export function seedPackDue(db: Db, dir: string): boolean {
  return existsSync(dir) && !readFlag(db, SEED_FLAG) && environmentCount(db) === 0;
}

export function markSeedPackImported(db: Db): void {
  writeFlag(db, SEED_FLAG, new Date().toISOString());
}

/** The first start's import in this process (a CLI command); null when it is not due. */
export async function importSeedPackIfDue(db: Db, dir = seedPackDir()): Promise<ImportSummary | null> {
  if (!seedPackDue(db, dir)) return null;
  const summary = await importPaths(db, [dir], { jobId: 'seed-pack' });
  if (!summary.cancelled) markSeedPackImported(db);
  return summary;
}
