import type { Statement } from 'better-sqlite3';
import type { Db } from './db';

/** Prepared statements cached per connection: preparing costs more than running at import speed. */
const cache = new WeakMap<Db, Map<string, Statement>>();

export function stmt(db: Db, sql: string): Statement {
  let m = cache.get(db);
  if (!m) {
    m = new Map();
    cache.set(db, m);
  }
  let s = m.get(sql);
  if (!s) {
    s = db.prepare(sql);
    m.set(sql, s);
  }
  return s;
}
