/**
 * Differences between two state trees as the harness describes them (`state()` in native/harness.py):
 * a node is {t, v} for scalars, {t, len, items} for sequences (dict items are [key, node] pairs),
 * {t, fields} for objects. Paths are what the UI highlights: `field`, `field[2]`, `field["key"]`.
 */

export interface StateNode {
  t: string;
  v?: unknown;
  len?: number;
  items?: unknown[];
  fields?: [string, StateNode][];
  more?: number;
  cut?: string;
}

export interface StateTree {
  className?: string | null;
  fields: [string, StateNode][];
  /** Attributes of the game's own classes, shared by every instance. */
  classFields?: [string, StateNode][];
  /** Module globals that hold data. */
  moduleGlobals?: [string, StateNode][];
}

export interface StateChange {
  path: string;
  kind: 'added' | 'removed' | 'changed';
  before?: string;
  after?: string;
}

const MAX_CHANGES = 500;

function isDict(n: StateNode): boolean {
  return Array.isArray(n.items) && n.items.length > 0 && n.items.every((x) => Array.isArray(x) && x.length === 2 && typeof x[0] === 'string');
}

/** A one-line rendering of a node for "before -> after" lists. */
export function summarize(n: StateNode | undefined, limit = 80): string {
  if (!n) return '';
  let s: string;
  if (n.items !== undefined) {
    const inner = isDict(n)
      ? (n.items as [string, StateNode][]).map(([k, x]) => `${k}: ${summarize(x, 20)}`).join(', ')
      : (n.items as StateNode[]).map((x) => summarize(x, 20)).join(', ');
    const open = n.t.endsWith('dict') || isDict(n) ? '{' : n.t.endsWith('tuple') ? '(' : n.t.endsWith('set') ? '{' : '[';
    const close = open === '{' ? '}' : open === '(' ? ')' : ']';
    s = `${open}${inner}${n.more ? `, +${n.more}` : ''}${close}`;
  } else if (n.fields) {
    s = `${n.t}(${n.fields.map(([k, x]) => `${k}=${summarize(x, 20)}`).join(', ')})`;
  } else if (n.t === 'str') {
    s = JSON.stringify(n.v);
  } else {
    s = String(n.v);
  }
  return s.length > limit ? `${s.slice(0, limit - 1)}\u2026` : s;
}

function childEntries(n: StateNode): [string, StateNode][] | null {
  if (n.fields) return n.fields.map(([k, x]) => [`.${k}`, x]);
  if (n.items === undefined) return null;
  if (isDict(n)) return (n.items as [string, StateNode][]).map(([k, x]) => [`[${JSON.stringify(k)}]`, x]);
  return (n.items as StateNode[]).map((x, i) => [`[${i}]`, x]);
}

function walk(path: string, a: StateNode | undefined, b: StateNode | undefined, out: StateChange[]): void {
  if (out.length >= MAX_CHANGES) return;
  if (a === undefined && b === undefined) return;
  if (a === undefined) {
    out.push({ path, kind: 'added', after: summarize(b) });
    return;
  }
  if (b === undefined) {
    out.push({ path, kind: 'removed', before: summarize(a) });
    return;
  }
  if (a.t !== b.t) {
    out.push({ path, kind: 'changed', before: `${summarize(a)} (${a.t})`, after: `${summarize(b)} (${b.t})` });
    return;
  }
  const ca = childEntries(a);
  const cb = childEntries(b);
  if (ca && cb) {
    const before = JSON.stringify(a);
    if (before === JSON.stringify(b)) return;
    // A container whose length changed is itself reported, then its children, so "grew by one" is visible at a glance.
    if ((a.len ?? ca.length) !== (b.len ?? cb.length)) out.push({ path, kind: 'changed', before: summarize(a), after: summarize(b) });
    const mb = new Map(cb);
    const seen = new Set<string>();
    for (const [k, x] of ca) {
      seen.add(k);
      walk(path + k, x, mb.get(k), out);
    }
    for (const [k, x] of cb) if (!seen.has(k)) walk(path + k, undefined, x, out);
    return;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ path, kind: 'changed', before: summarize(a), after: summarize(b) });
}

/**
 * Changed paths between two states; paths start without the leading dot (`asked[1]`, `pos`).
 * Class attributes are `ClassName.attr` and module globals `globals.name`, as the state tree shows them.
 */
export function diffStates(a: StateTree | null | undefined, b: StateTree | null | undefined): StateChange[] {
  const out: StateChange[] = [];
  const group = (s: StateTree | null | undefined, f: [string, StateNode][] | undefined): StateNode | undefined => (s ? { t: 'group', fields: f ?? [] } : undefined);
  walk('', group(a, a?.fields), group(b, b?.fields), out);
  const cls = b?.className ?? a?.className ?? 'object';
  if (a?.classFields?.length || b?.classFields?.length) walk(cls, group(a, a?.classFields), group(b, b?.classFields), out);
  if (a?.moduleGlobals?.length || b?.moduleGlobals?.length) walk('globals', group(a, a?.moduleGlobals), group(b, b?.moduleGlobals), out);
  return out.map((c) => ({ ...c, path: c.path.startsWith('.') ? c.path.slice(1) : c.path }));
}

export type LineOp = { op: '=' | '+' | '-'; text: string };

/** Line diff (LCS) of two observations; long texts fall back to a whole replace to stay bounded. */
export function diffLines(before: string, after: string): LineOp[] {
  const a = before.split('\n');
  const b = after.split('\n');
  if (a.length * b.length > 250_000) return [...a.map((text) => ({ op: '-' as const, text })), ...b.map((text) => ({ op: '+' as const, text }))];
  const n = a.length;
  const m = b.length;
  const dp: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    const row = dp[i]!;
    const next = dp[i + 1]!;
    for (let j = m - 1; j >= 0; j--) row[j] = a[i] === b[j] ? next[j + 1]! + 1 : Math.max(next[j]!, row[j + 1]!);
  }
  const ops: LineOp[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push({ op: '=', text: a[i]! });
      i++;
      j++;
    } else if (dp[i + 1]![j]! >= dp[i]![j + 1]!) ops.push({ op: '-', text: a[i++]! });
    else ops.push({ op: '+', text: b[j++]! });
  }
  while (i < n) ops.push({ op: '-', text: a[i++]! });
  while (j < m) ops.push({ op: '+', text: b[j++]! });
  return ops;
}
