/**
 * "Run until" conditions over a state tree: `path OP value`, where path is `field`, `a.b`,
 * `a[0]`, `a["k"]` or `len(path)`, OP one of == != < <= > >= in, and value a JSON literal or a
 * Python literal (True/False/None, tuples as lists, single-quoted strings). Written as a tiny
 * parser instead of Python eval so the condition cannot run code in the host or the sandbox.
 */
import { DomainError } from '../errors';
import type { StateNode, StateTree } from './stateDiff';

type Op = '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in' | 'not in';

export interface StateCondition {
  path: (string | number)[];
  len: boolean;
  op: Op;
  value: unknown;
  text: string;
}

function parsePath(p: string): (string | number)[] {
  const out: (string | number)[] = [];
  const re = /([A-Za-z_][A-Za-z0-9_]*)|\[(-?\d+)\]|\[(["'])(.*?)\3\]|(\.)/gy;
  let m: RegExpExecArray | null;
  let pos = 0;
  while (pos < p.length) {
    re.lastIndex = pos;
    m = re.exec(p);
    if (!m) throw new DomainError('invalid_input', `Cannot read the state path at "${p.slice(pos)}"`);
    if (m[1] !== undefined) out.push(m[1]);
    else if (m[2] !== undefined) out.push(Number(m[2]));
    else if (m[4] !== undefined) out.push(m[4]);
    pos = re.lastIndex;
  }
  if (out.length === 0) throw new DomainError('invalid_input', 'The condition names no state field');
  return out;
}

function parseLiteral(s: string): unknown {
  const t = s.trim();
  const py = t
    .replace(/\bTrue\b/g, 'true')
    .replace(/\bFalse\b/g, 'false')
    .replace(/\bNone\b/g, 'null')
    .replace(/^\((.*)\)$/s, '[$1]')
    .replace(/'([^'"]*)'/g, '"$1"')
    .replace(/,\s*\]/g, ']');
  try {
    return JSON.parse(py);
  } catch {
    throw new DomainError('invalid_input', `Cannot read the value "${t}" (use a number, a quoted string, True/False/None or a list)`);
  }
}

export function parseCondition(text: string): StateCondition {
  const m = /^\s*(len\(\s*(.+?)\s*\)|[^\s=!<>]+)\s*(==|!=|<=|>=|<|>|not in|in)\s*(.+)$/s.exec(text);
  if (!m) throw new DomainError('invalid_input', `A condition looks like "turn >= 3", "len(asked) > 1" or "pos == (4, 4)"; got "${text}"`);
  const len = m[2] !== undefined;
  return { path: parsePath(len ? m[2]! : m[1]!), len, op: m[3] as Op, value: parseLiteral(m[4]!), text };
}

/** A state node as a plain value (tuples and sets as arrays, dicts as objects). */
export function nodeValue(n: StateNode): unknown {
  if (n.fields) return Object.fromEntries(n.fields.map(([k, x]) => [k, nodeValue(x)]));
  if (n.items !== undefined) {
    const items = n.items as unknown[];
    const dict = items.length > 0 && items.every((x) => Array.isArray(x) && x.length === 2 && typeof x[0] === 'string');
    if (dict || n.t.endsWith('dict') || n.t === 'collections.OrderedDict' || n.t === 'collections.defaultdict' || n.t === 'collections.Counter') {
      return Object.fromEntries((items as [string, StateNode][]).map(([k, x]) => [k, nodeValue(x)]));
    }
    return (items as StateNode[]).map(nodeValue);
  }
  return n.v;
}

function resolve(state: StateTree, path: (string | number)[]): StateNode | undefined {
  let node: StateNode | undefined = { t: state.className ?? 'object', fields: state.fields };
  for (const key of path) {
    if (!node) return undefined;
    if (node.fields) node = node.fields.find(([k]) => k === key)?.[1];
    else if (node.items !== undefined) {
      const items = node.items as unknown[];
      if (typeof key === 'number') node = items[key < 0 ? items.length + key : key] as StateNode | undefined;
      else node = (items as [string, StateNode][]).find((x) => Array.isArray(x) && x[0] === key)?.[1];
    } else return undefined;
  }
  return node;
}

const eq = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

export function evaluate(c: StateCondition, state: StateTree | null): boolean {
  if (!state) return false;
  const node = resolve(state, c.path);
  if (!node) return false;
  const left: unknown = c.len ? (node.len ?? (Array.isArray(node.items) ? node.items.length : typeof node.v === 'string' ? node.v.length : undefined)) : nodeValue(node);
  const right = c.value;
  switch (c.op) {
    case '==':
      return eq(left, right);
    case '!=':
      return !eq(left, right);
    case 'in':
    case 'not in': {
      const hit = Array.isArray(right) ? right.some((x) => eq(x, left)) : typeof right === 'string' && typeof left === 'string' ? right.includes(left) : false;
      return c.op === 'in' ? hit : !hit;
    }
    default: {
      if (typeof left !== 'number' && typeof left !== 'string') return false;
      if (typeof right !== typeof left) return false;
      const l = left as number;
      const r = right as number;
      return c.op === '<' ? l < r : c.op === '<=' ? l <= r : c.op === '>' ? l > r : l >= r;
    }
  }
}
