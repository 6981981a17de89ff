/**
 * Layout 3, static pool: `manifest.jsonl` (+ `validation_manifest.jsonl`) naming the game files
 * (often under games/) with their fields, and `checksums.sha256` verified against each file
 * (games.ts flags a mismatch).
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { importGame } from './games';
import { entryFile, errReason, fieldsFromRecord } from './records';
import { Cancelled, NOT_FOLLOWED, type ImportSession } from './session';

export function loadChecksums(s: ImportSession, path: string): void {
  if (s.consumed.has(path) && s.checksums.size) return;
  s.consumed.add(path);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    return s.skip(path, errReason(e));
  }
  const dir = dirname(path);
  let bad = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const m = /^([0-9a-fA-F]{64}) [ *](.+)$/.exec(line.trimEnd());
    if (!m) {
      bad++;
      continue;
    }
    const file = resolve(dir, m[2]!);
    if (!s.inside(dirname(file))) continue; // never even probe for files outside the chosen folders
    s.checksums.set(file, m[1]!.toLowerCase());
    if (!existsSync(file)) s.skip(file, 'listed in checksums.sha256 but missing');
  }
  if (bad) s.summary.flagged.push({ path, flag: 'malformed_checksums', detail: `${bad} line(s) are not in sha256sum format` });
}

export async function loadValidation(s: ImportSession, path: string): Promise<void> {
  s.consumed.add(path);
  const dir = dirname(path);
  try {
    for await (const { rec } of s.jsonRecords(path)) {
      const file = entryFile(rec);
      const v = fieldsFromRecord(rec).validation;
      if (file && v) {
        s.validation.set(resolve(dir, file), v);
        s.validation.set(resolve(dir, 'games', basename(file)), v);
      }
    }
  } catch (e) {
    s.skip(path, errReason(e));
  }
}

/** Static pool: manifest.jsonl names the game files (often under games/) and carries their fields. */
export async function importPoolManifest(s: ImportSession, path: string): Promise<void> {
  if (s.consumed.has(path)) return;
  s.consumed.add(path);
  const dir = dirname(path);
  try {
    for await (const { where, rec } of s.jsonRecords(path)) {
      const file = entryFile(rec);
      if (!file) {
        s.skipLine(where, 'manifest entry names no file');
        continue;
      }
      let abs = resolve(dir, file);
      if (!s.inside(dirname(abs)) || (existsSync(abs) && s.refuseOutside(abs))) {
        if (!s.inside(dirname(abs))) s.skipLine(where, `${NOT_FOLLOWED} (names ${file})`);
        continue;
      }
      if (!existsSync(abs) && existsSync(resolve(dir, 'games', basename(file)))) abs = resolve(dir, 'games', basename(file));
      if (!existsSync(abs)) {
        s.consumed.add(abs);
        s.skip(abs, `named in ${basename(path)} but missing`);
        continue;
      }
      if (s.consumed.has(abs)) continue;
      await importGame(s, abs, fieldsFromRecord(rec));
    }
  } catch (e) {
    if (e instanceof Cancelled) throw e;
    s.skip(path, errReason(e));
  }
}
