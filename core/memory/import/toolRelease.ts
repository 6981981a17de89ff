/** Layout 4, tool-use release: `manifest.json` listing one `.py` per environment, its fields kept. */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { MANIFEST_FROM } from '../parse';
import { importGame } from './games';
import { entryFile, errReason, fieldsFromRecord } from './records';
import { MAX_JSON_BYTES, NOT_FOLLOWED, type ImportSession } from './session';

/** Tool-use release: manifest.json lists entries, one `.py` each; every field is kept. */
export async function importToolManifest(s: ImportSession, path: string): Promise<void> {
  if (s.consumed.has(path)) return;
  s.consumed.add(path);
  const dir = dirname(path);
  let doc: unknown;
  try {
    if (statSync(path).size > MAX_JSON_BYTES) return s.skip(path, 'manifest too large');
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    return s.skip(path, `broken JSON: ${errReason(e)}`);
  }
  let entries: Record<string, unknown>[] = [];
  const asEntries = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x)) : null);
  if (Array.isArray(doc)) entries = asEntries(doc)!;
  else if (doc && typeof doc === 'object') {
    const o = doc as Record<string, unknown>;
    const list = ['environments', 'envs', 'entries', 'items', 'games'].map((k) => asEntries(o[k])).find((x) => x && x.length);
    if (list) entries = list;
    else {
      // {"name": {...fields}} maps are also seen; the key is the environment's name.
      const vals = Object.entries(o).filter(([, v]) => v && typeof v === 'object' && !Array.isArray(v));
      entries = vals.map(([k, v]) => ({ name: k, ...(v as Record<string, unknown>) }));
    }
  }
  entries = entries.filter((e) => entryFile(e) || (typeof e.name === 'string' && existsSync(join(dir, `${e.name}.py`))));
  if (!entries.length) return s.skip(path, 'manifest.json lists no environment files');
  for (const [i, e] of entries.entries()) {
    const file = entryFile(e) ?? `${e.name as string}.py`;
    const abs = resolve(dir, file);
    if (!s.inside(dirname(abs))) {
      s.skipLine(`${path}#${i + 1}`, `${NOT_FOLLOWED} (names ${file})`);
      continue;
    }
    if (!existsSync(abs)) {
      s.consumed.add(abs);
      s.skip(abs, `named in manifest.json (entry ${i + 1}) but missing`);
      continue;
    }
    if (s.consumed.has(abs)) continue;
    const fields = fieldsFromRecord(e);
    // The release names environments by slug; the class name is the better display name.
    delete fields.name;
    // A release's entry is kept whole (an export writes it back); one our export made up for an
    // environment that had none is not the environment's: keeping it would be a change.
    const own = e[MANIFEST_FROM] === 'workbench';
    await importGame(s, abs, { kind: 'tool-use', ...fields, meta: { ...(fields.meta ?? {}), ...(own ? {} : { manifest: e }) } });
  }
}
