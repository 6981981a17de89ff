import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { probePython } from '../../core/runtime/native';
import { packageRoot } from '../../core/base/appInfo';

/** The fork server's line relay (native/cpython_main.py), run by a plain python3 outside any sandbox. */
function py(code: string): unknown {
  const python = probePython();
  if (!python) throw new Error('no python3');
  const r = spawnSync(python.path, ['-c', `import sys, json, random\nsys.path.insert(0, ${JSON.stringify(join(packageRoot(), 'native'))})\nfrom cpython_main import split_lines\n${code}`], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

test.runIf(probePython())('relayed lines are the stream’s lines, however it is cut: replies whole, stderr as a bounded tail', () => {
  // The meaning split_lines had before it kept a line's pieces apart: the whole buffer re-split at every read.
  const out = py(String.raw`
def reference(chunks, stderr):
    buf, lines = b"", []
    for c in chunks:
        parts = (buf + c).split(b"\n")
        buf = parts.pop()
        if stderr:
            lines += [p[:4000] for p in parts if p.strip()]
            buf = buf[-65536:]
        else:
            lines += parts
    return lines

rng = random.Random(7)
streams = [
    b"a\nbb\n\nccc\n",
    b"x" * 200000 + b"\nshort\n" + b"y" * 70000 + b"\n\n  \n" + b"z" * 5000 + b"\ntail without end",
    b"\n".join(bytes([65 + rng.randrange(26)]) * rng.randrange(0, 90000) for _ in range(40)) + b"\n",
]
checked = 0
for stream in streams:
    for stderr in (False, True):
        for trial in range(30):
            chunks, i = [], 0
            while i < len(stream):
                n = rng.choice([1, 2, 7, 4096, 65536, rng.randrange(1, 70000)])
                chunks.append(stream[i:i + n])
                i += n
            pending, got = [], []
            for c in chunks:
                got += split_lines(pending, c, stderr)
            assert got == reference(chunks, stderr), (stderr, trial)
            checked += 1

# A line arriving in pieces is kept as those pieces until its end: joined once, not at every read.
pending = []
for _ in range(100):
    assert split_lines(pending, b"p" * 65536) == []
kept = len(pending)
line = split_lines(pending, b"end\nnext")
print(json.dumps({"checked": checked, "kept": kept, "line": len(line[0]), "rest": pending}, default=lambda b: b.decode()))
`) as { checked: number; kept: number; line: number; rest: string[] };
  expect(out.checked).toBe(180);
  expect(out.kept).toBe(100);
  expect(out.line).toBe(100 * 65536 + 3);
  expect(out.rest).toEqual(['next']);
});
