/** Layout 6, any other `*.jsonl`: one environment per line (`code`, optional `hint`, `skill`, `name`, other keys kept). */
import { decodeSource } from '../parse';
import { errReason, fieldsFromRecord, merge } from './records';
import { Cancelled, type ImportSession } from './session';

export async function importJsonl(s: ImportSession, path: string): Promise<void> {
  s.consumed.add(path);
  s.summary.files++;
  let sawCode = false;
  let first = true;
  try {
    for await (const { where, rec } of s.jsonRecords(path)) {
      const code = typeof rec.code === 'string' ? rec.code : null;
      if (code === null) {
        if (first && !sawCode) {
          s.skip(path, 'not an environment JSONL (the first record has no "code" string)');
          return;
        }
        s.skipLine(where, 'no "code" string');
        continue;
      }
      first = false;
      sawCode = true;
      const check = decodeSource(Buffer.from(code), s.maxBytes);
      if (!check.ok) {
        s.skipLine(where, check.reason);
        continue;
      }
      await s.add(merge({ source: code, path: where }, fieldsFromRecord(rec)));
    }
  } catch (e) {
    if (e instanceof Cancelled) throw e;
    s.skip(path, errReason(e));
  }
}
