import { PassThrough } from 'node:stream';
import { expect, test } from 'vitest';
import { boundedLineWriter, encodeCall, encodeReply, onLines, splitHead } from '../../core/runtime/childProtocol';
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

test('stderr from the game’s interpreter: whole lines across writes, NULs dropped, an endless line kept to its tail', () => {
  const got: string[] = [];
  const w = boundedLineWriter((l) => got.push(l), 16);
  const enc = new TextEncoder();
  const bytes = enc.encode('a\u0000b\n@call-deadline 5000\né ✓\n');
  // cut inside the marker and inside the two-byte "é"
  const cuts = [0, 3, 9, bytes.indexOf(0xc3) + 1, bytes.length];
  for (let i = 1; i < cuts.length; i++) expect(w.write(bytes.slice(cuts[i - 1], cuts[i]))).toBe(cuts[i]! - cuts[i - 1]!);
  expect(got).toEqual(['ab', '@call-deadline 5000', 'é ✓']);
  // 1 MB without a newline, in pieces: only its last 16 bytes are kept for when it ends
  const block = enc.encode('0123456789abcdef'.repeat(4096));
  for (let i = 0; i < 16; i++) w.write(block);
  w.write(enc.encode('the last 16 byte'));
  w.write(enc.encode('s\nnext\n'));
  expect(got.slice(3)).toEqual(['the last 16 bytes', 'next']);
});
