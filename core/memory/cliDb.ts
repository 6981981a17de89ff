import { join, resolve } from 'node:path';
import { openDatabase, type Db } from './db';
import { checkIntegrity, pauseWrites } from './integrity';
import { defaultDataDir } from '../base/dataDir'; // not services/services: that loads every service (a second of a cold CLI start)

/**
 * The CLI works on the same database file the app uses (WAL lets it run beside an open app). It
 * checks the file like the app does: a damaged one is still readable here, but writes are paused
 * (the choice to write anyway is made in the app, where the problems are shown).
 */
export function openDataDir(dataDir: string | undefined, warn: (msg: string) => void = (m) => process.stderr.write(`${m}\n`)): { db: Db; dataDir: string } {
  const dir = resolve(dataDir ?? defaultDataDir());
  const file = join(dir, 'workbench.sqlite');
  const db = openDatabase(file);
  const report = checkIntegrity(db, 'quick');
  if (!report.ok) {
    pauseWrites(db, true);
    warn(
      `warning: ${file} failed its quick integrity check (${report.truncated ? 'at least ' : ''}${report.problems.length} problem(s), first: ${report.problems[0] ?? '?'}); ` +
        'reading only. Open the workbench to run a full check or choose to keep writing.',
    );
  }
  return { db, dataDir: dir };
}

export function fmtNum(v: number | null, digits = 2): string {
  return v === null ? '-' : v.toFixed(digits);
}
