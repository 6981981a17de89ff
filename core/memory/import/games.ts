/**
 * Layout 1, games: `game_*.py` with sibling `{stem}_hint.txt` and `{stem}.json` spec; `step_NNNNN/`
 * gives the rollout step. Every layout that names a program file (static pool, tool-use release)
 * reads it through here; a rejected game (layout 2) is recognised on the way (rejected.ts).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { MAX_HINT_BYTES } from '../../api/limits';
import { decodeSource, findClassName, parseGameStem, rolloutFromPath, sha256 } from '../parse';
import type { EnvCandidate } from '../repository';
import { errReason, fieldsFromRecord, merge } from './records';
import { markRejected } from './rejected';
import type { ImportSession } from './session';

/** Reads one program file with its companions (hint, spec, rejection reason) and hands it to the session. */
export async function importGame(s: ImportSession, path: string, extra: Partial<EnvCandidate>): Promise<void> {
  if (s.refuseOutside(path)) return;
  s.consumed.add(path);
  s.summary.files++;
  let buf: Buffer;
  try {
    const st = statSync(path);
    if (!st.isFile()) return s.skip(path, 'not a regular file');
    if (st.size > s.maxBytes) return s.skip(path, `too large (${st.size} bytes; the limit is ${s.maxBytes})`);
    buf = readFileSync(path);
  } catch (e) {
    return s.skip(path, errReason(e));
  }
  const text = decodeSource(buf, s.maxBytes);
  if (!text.ok) return s.skip(path, text.reason);
  const dir = dirname(path);
  const stem = basename(path, '.py');
  let c: EnvCandidate = { source: text.text, path, fileStem: stem };

  const game = parseGameStem(stem);
  if (game) {
    if (game.skill) c.skill = game.skill;
    c.rolloutStep = game.rollout;
  }
  const stepFromPath = rolloutFromPath(dir);
  if (stepFromPath !== null) c.rolloutStep = stepFromPath;

  const specPath = join(dir, `${stem}.json`);
  if (existsSync(specPath) && !s.refuseOutside(specPath)) {
    s.consumed.add(specPath);
    try {
      const spec = JSON.parse(readFileSync(specPath, 'utf8')) as unknown;
      if (spec && typeof spec === 'object' && !Array.isArray(spec)) {
        const fields = fieldsFromRecord(spec as Record<string, unknown>);
        c = merge(c, { ...fields, meta: { spec } });
      } else s.skip(specPath, 'spec is not a JSON object');
    } catch (e) {
      s.skip(specPath, `broken JSON: ${errReason(e)}`);
    }
  }
  const hint = s.readCompanion(join(dir, `${stem}_hint.txt`), MAX_HINT_BYTES);
  if (hint) c.hint = hint;

  markRejected(s, c, path, text.text);
  c = merge(c, extra);

  if (!c.rejected && !findClassName(c.source)) {
    return s.skip(path, 'no class whose name ends in Env (SPADE would not load it)');
  }
  const expected = s.checksums.get(path);
  if (expected !== undefined) {
    const actual = sha256(buf);
    if (actual !== expected) {
      c.flags = [...(c.flags ?? []), 'checksum_mismatch'];
      s.summary.flagged.push({ path, flag: 'checksum_mismatch', detail: `checksums.sha256 says ${expected.slice(0, 12)}…, the file hashes to ${actual.slice(0, 12)}…` });
    }
  }
  const v = s.validation.get(path);
  if (v && !c.validation) c.validation = v;
  await s.add(c);
}
