import { join, resolve } from 'node:path';
import { openDatabase, type Db } from './db';
import { defaultDataDir } from '../services/services';

/** The CLI works on the same database file the app uses (WAL lets it run beside an open app). */
export function openDataDir(dataDir: string | undefined): { db: Db; dataDir: string } {
  const dir = resolve(dataDir ?? defaultDataDir());
  return { db: openDatabase(join(dir, 'workbench.sqlite')), dataDir: dir };
}

export function fmtNum(v: number | null, digits = 2): string {
  return v === null ? '-' : v.toFixed(digits);
}
