/**
 * A unified diff (`diff -u` / `git apply` format) between two texts, for "write back" previews and
 * for a patch a researcher can apply to the run's own copy. Lines are compared with Myers' O(ND)
 * algorithm, written here from the paper's description.
 */

type Op = { kind: ' ' | '-' | '+'; line: string };

const NO_NEWLINE = '\u0000';

function splitLines(text: string): { lines: string[]; finalNewline: boolean } {
  if (text === '') return { lines: [], finalNewline: true };
  const finalNewline = text.endsWith('\n');
  const lines = (finalNewline ? text.slice(0, -1) : text).split('\n');
  // A last line without its newline differs from the same text with one (diff shows both).
  if (!finalNewline) lines[lines.length - 1] += NO_NEWLINE;
  return { lines, finalNewline };
}

/** The shortest edit script from a to b, as kept/removed/added lines in order. */
export function lineDiff(a: readonly string[], b: readonly string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  let v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = max === 0;
  for (let d = 0; d <= max && !found; d++) {
    trace.push(v.slice());
    const next = v.slice();
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      next[offset + k] = x;
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
    v = next;
  }
  trace.push(v);
  // Walk back through the saved frontiers.
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 2; d >= 0 && (x > 0 || y > 0); d--) {
    const vd = trace[d]!;
    const k = x - y;
    const down = k === -d || (k !== d && vd[offset + k - 1]! < vd[offset + k + 1]!);
    const prevK = down ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : vd[offset + prevK]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push({ kind: ' ', line: a[x - 1]! });
      x--;
      y--;
    }
    if (d === 0) break;
    if (down) ops.push({ kind: '+', line: b[y - 1]! });
    else ops.push({ kind: '-', line: a[x - 1]! });
    x = prevX;
    y = prevY;
  }
  while (x > 0 && y > 0) {
    ops.push({ kind: ' ', line: a[x - 1]! });
    x--;
    y--;
  }
  return ops.reverse();
}

/** `--- a/<path>` / `+++ b/<path>` and hunks with `context` lines around each change; '' when equal. */
export function unifiedDiff(before: string, after: string, path: string, context = 3): string {
  if (before === after) return '';
  const A = splitLines(before);
  const B = splitLines(after);
  const ops = lineDiff(A.lines, B.lines);
  const noNl = '\\ No newline at end of file';
  const out: string[] = [`--- a/${path}`, `+++ b/${path}`];
  const changed = ops.map((o) => o.kind !== ' ');
  let i = 0;
  while (i < ops.length) {
    if (!changed[i]) {
      i++;
      continue;
    }
    let start = Math.max(0, i - context);
    let end = i;
    // Extend the hunk while the next change is within 2*context lines.
    for (;;) {
      while (end < ops.length && changed[end]) end++;
      let j = end;
      while (j < ops.length && !changed[j] && j - end < 2 * context) j++;
      if (j < ops.length && changed[j]) end = j;
      else {
        end = Math.min(ops.length, end + context);
        break;
      }
    }
    let aLine = 1;
    let bLine = 1;
    for (let k = 0; k < start; k++) {
      if (ops[k]!.kind !== '+') aLine++;
      if (ops[k]!.kind !== '-') bLine++;
    }
    const hunk = ops.slice(start, end);
    const aCount = hunk.filter((o) => o.kind !== '+').length;
    const bCount = hunk.filter((o) => o.kind !== '-').length;
    out.push(`@@ -${aCount ? aLine : aLine - 1},${aCount} +${bCount ? bLine : bLine - 1},${bCount} @@`);
    for (const o of hunk) {
      const bare = o.line.endsWith(NO_NEWLINE);
      out.push(`${o.kind}${bare ? o.line.slice(0, -1) : o.line}`);
      if (bare) out.push(noNl);
    }
    start = end;
    i = end;
  }
  return `${out.join('\n')}\n`;
}
