import { PassThrough } from 'node:stream';
import { expect, test } from 'vitest';
import { encodeCall, encodeReply, onLines, splitHead } from '../../core/runtime/childProtocol';
import { wheelsPresent } from '../../core/runtime/paths';
import { nativeReason } from '../../core/runtime/service';

test('lines are reassembled across chunk boundaries and multi-line chunks', async () => {
  const s = new PassThrough();
  const got: string[] = [];
  onLines(s, (l) => got.push(l));
  const a = encodeCall(7, 30000, '{"cmd":"step","action":"\\\\boxed{1}\\nsecond line"}');
  const b = encodeReply(8, '{"ok":true,"result":"é ✓"}');
  const all = Buffer.from(a + b, 'utf8');
  // split inside the multi-byte "é" and inside the first line
  for (const cut of [[0, 5], [5, all.length - 6], [all.length - 6, all.length]]) s.write(all.subarray(cut[0], cut[1]));
  await new Promise((r) => setImmediate(r));
  expect(got).toEqual([a.slice(0, -1), b.slice(0, -1)]);
  const [id, at] = splitHead(got[0]!, 1);
  const [timeout, at2] = splitHead(got[0]!, at);
  expect([id, timeout]).toEqual([7, 30000]);
  expect(JSON.parse(got[0]!.slice(at2))).toEqual({ cmd: 'step', action: '\\boxed{1}\nsecond line' });
});

test('auto mode sends numpy games to native CPython, and math_verify games only where Pyodide lacks its wheels', () => {
  expect(nativeReason('import numpy as np\nclass XEnv: pass')).toContain('numpy');
  if (wheelsPresent()) expect(nativeReason('from math_verify import parse, verify\n')).toBeNull();
  else expect(nativeReason('from math_verify import parse, verify\n')).toContain('math_verify');
  expect(nativeReason('x = np.zeros(3)\n')).toContain('numpy');
  expect(nativeReason('import random\nclass XEnv:\n    pass\n')).toBeNull();
  // a word that merely contains "np." is not numpy
  expect(nativeReason('s = "snp.x"\n')).toBeNull();
});
