/**
 * An action script on disk: a JSON array of strings (agent texts, multi-line allowed), or plain
 * text with one action per line (blank lines and lines starting with # are skipped).
 */
import { DomainError } from '../errors';
import { errorMessage } from '../api';

export function parseActionsFile(text: string): string[] {
  const t = text.trim();
  if (t.startsWith('[')) {
    let v: unknown;
    try {
      v = JSON.parse(t);
    } catch (e) {
      throw new DomainError('invalid_input', `The actions file looks like JSON but does not parse: ${errorMessage(e)}`);
    }
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new DomainError('invalid_input', 'A JSON actions file must be an array of strings');
    return v as string[];
  }
  return t
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
}
