/**
 * Layout 2, rejected games: `spade_games_rejected/reject_..._{stage}.py` + `.reason.txt`,
 * `rejected/rej_*.py`, and any program whose first line is SPADE's `# REJECTED (attempt N): <error>`.
 */
import { basename, dirname, join } from 'node:path';
import { parseRejectedHeader, parseRejectedStem } from '../parse';
import type { EnvCandidate } from '../repository';
import type { ImportSession } from './session';

/** Marks `c` rejected (stage, reason, attempt, and the skill and step its name gives) when its name, folder or first line say so. */
export function markRejected(s: ImportSession, c: EnvCandidate, path: string, source: string): void {
  const dir = dirname(path);
  const stem = basename(path, '.py');
  const rejectedFolder = /[\\/](spade_games_rejected|rejected)[\\/]/.test(path);
  const rej = parseRejectedStem(stem);
  // `# REJECTED (attempt N): <error>` marks a rejected game whatever its name or folder.
  const header = parseRejectedHeader(source);
  if ((rej && (rejectedFolder || stem.startsWith('reject_') || stem.startsWith('rej_'))) || header?.attempt != null) {
    const reason = s.readCompanion(join(dir, `${stem}.reason.txt`)) ?? s.readCompanion(join(dir, `${stem}.py.reason.txt`)) ?? header?.error ?? null;
    c.rejected = { stage: rej?.stage ?? header?.stage ?? null, reason };
    if (rej?.skill) c.skill = rej.skill;
    if (rej && rej.rollout !== null) c.rolloutStep = rej.rollout;
    const attempt = header?.attempt ?? rej?.attempt ?? null;
    if (attempt !== null) c.meta = { ...(c.meta ?? {}), rejection_attempt: attempt };
  }
}
