/**
 * Episodes out to and in from JSONL, one episode a line (core/episodes/jsonl.ts writes and reads a
 * line): export carries each episode's environment source so the file is self-sufficient; import
 * adds that source to the library and refuses a line whose source does not hash to its envHash.
 */
import type { EpisodeContext } from './context';
import { episodeLine, readEpisodeLines } from './jsonl';

export function exportJsonl(ctx: EpisodeContext, ids: number[]): { text: string; count: number } {
  const lines = ids.map((id) => {
    const m = ctx.meta(id);
    return episodeLine(m, ctx.d.catalog.byHash(m.envHash)?.source ?? null, ctx.d.store.steps(id, true));
  });
  return { text: lines.join('\n') + (lines.length ? '\n' : ''), count: lines.length };
}

export function importJsonl(ctx: EpisodeContext, text: string): { ids: number[]; skipped: { line: number; reason: string }[] } {
  const { catalog, store } = ctx.d;
  const ids: number[] = [];
  const skipped: { line: number; reason: string }[] = [];
  for (const { line, parsed: r } of readEpisodeLines(text)) {
    if (typeof r === 'string') {
      skipped.push({ line, reason: r });
      continue;
    }
    let hash = r.envHash;
    if (r.source) {
      const added = catalog.add(r.source, r.className, `episode import line ${line}`);
      if (hash && added !== hash) {
        skipped.push({ line, reason: `the source's SHA-256 (${added.slice(0, 12)}) does not match envHash (${hash.slice(0, 12)})` });
        continue;
      }
      hash = added;
    }
    const id = store.create({ ...r, envHash: hash, origin: r.origin, meta: { ...r.meta, importedFrom: 'jsonl' } });
    store.appendSteps(id, r.steps);
    ids.push(id);
  }
  ctx.d.changed?.(ids);
  return { ids, skipped };
}
