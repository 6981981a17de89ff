/**
 * JSON as SPADE's Python reads it, for the places where the host must give Python's answer rather
 * than JavaScript's: a tool call's name may be any JSON value, and SPADE's ToolUseBaseEnv looks it
 * up as f"tool_{name}", i.e. by Python's str() of what json.loads made of it (docs/spade-formats.md
 * section 4). JSON.parse cannot say that: it forgets that `1.0` was a float, rounds big integers,
 * orders integer-like keys first and refuses NaN; Python also refuses an integer of more than 4,300
 * digits (CPython's int_max_str_digits, 3.11 and later 3.10s), which JSON.parse reads.
 */

export type PyValue =
  | { t: 'str'; v: string }
  | { t: 'int'; v: bigint }
  | { t: 'float'; v: number }
  | { t: 'bool'; v: boolean }
  | { t: 'none' }
  | { t: 'list'; v: PyValue[] }
  /** Insertion order of each key's first appearance, holding its last value, as a Python dict. */
  | { t: 'dict'; v: Map<string, PyValue> };

/** CPython's default sys.get_int_max_str_digits(): json.loads raises ValueError past it. */
export const INT_MAX_STR_DIGITS = 4300;

export class PythonJsonError extends Error {}

const WS = /[ \t\n\r]*/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/y;
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** Python's json.loads(text): the value, or a PythonJsonError where Python raises ValueError. */
export function pyJsonLoads(text: string): PyValue {
  let i = 0;
  const fail = (why: string): never => {
    throw new PythonJsonError(`${why} at ${i}`);
  };
  const ws = (): void => {
    WS.lastIndex = i;
    WS.exec(text);
    i = WS.lastIndex;
  };
  const str = (): string => {
    i++; // the opening quote
    let out = '';
    for (;;) {
      const c = text[i];
      if (c === undefined) fail('unterminated string');
      if (c === '"') {
        i++;
        return out;
      }
      if (c! < ' ') fail('invalid control character'); // json.loads' strict=True
      if (c !== '\\') {
        out += c;
        i++;
        continue;
      }
      const e = text[i + 1];
      if (e === 'u') {
        const hex = text.slice(i + 2, i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('invalid \\uXXXX escape');
        out += String.fromCharCode(parseInt(hex, 16)); // surrogates pair up as in Python's str
        i += 6;
      } else if (e !== undefined && ESCAPES[e] !== undefined) {
        out += ESCAPES[e];
        i += 2;
      } else fail('invalid escape');
    }
  };
  const value = (): PyValue => {
    const c = text[i];
    if (c === '"') return { t: 'str', v: str() };
    if (c === '{') {
      i++;
      const v = new Map<string, PyValue>();
      ws();
      if (text[i] === '}') {
        i++;
        return { t: 'dict', v };
      }
      for (;;) {
        if (text[i] !== '"') fail('expecting property name');
        const k = str();
        ws();
        if (text[i] !== ':') fail("expecting ':'");
        i++;
        ws();
        v.set(k, value());
        ws();
        if (text[i] === ',') {
          i++;
          ws();
          continue;
        }
        if (text[i] === '}') {
          i++;
          return { t: 'dict', v };
        }
        fail("expecting ',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      const v: PyValue[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return { t: 'list', v };
      }
      for (;;) {
        v.push(value());
        ws();
        if (text[i] === ',') {
          i++;
          ws();
          continue;
        }
        if (text[i] === ']') {
          i++;
          return { t: 'list', v };
        }
        fail("expecting ',' or ']'");
      }
    }
    for (const [word, v] of [
      ['null', { t: 'none' }],
      ['true', { t: 'bool', v: true }],
      ['false', { t: 'bool', v: false }],
      ['NaN', { t: 'float', v: Number.NaN }],
      ['Infinity', { t: 'float', v: Number.POSITIVE_INFINITY }],
      ['-Infinity', { t: 'float', v: Number.NEGATIVE_INFINITY }],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) return fail('expecting value');
    i = NUMBER.lastIndex;
    if (m[1] === undefined && m[2] === undefined) {
      if (m[0].replace('-', '').length > INT_MAX_STR_DIGITS) fail('Exceeds the limit (4300 digits) for integer string conversion');
      return { t: 'int', v: BigInt(m[0]) };
    }
    return { t: 'float', v: Number(m[0]) };
  };
  ws();
  const v = value();
  ws();
  if (i !== text.length) fail('extra data');
  return v;
}

/** A Python value as JavaScript sees JSON: what JSON.parse would give, with NaN and ±Infinity as numbers. */
export function toJs(v: PyValue): unknown {
  switch (v.t) {
    case 'none':
      return null;
    case 'int':
      return Number(v.v);
    case 'list':
      return v.v.map(toJs);
    case 'dict':
      // fromEntries makes own properties, so a "__proto__" key stays a key as JSON.parse keeps it.
      return Object.fromEntries([...v.v].map(([k, x]) => [k, toJs(x)]));
    default:
      return v.v;
  }
}

/** Python's repr() of a float (the shortest digits that read back, in Python's layout). */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mant, exp] = Math.abs(x).toExponential().split('e') as [string, string];
  const digits = mant.replace('.', '');
  const e = Number(exp);
  const sign = x < 0 ? '-' : '';
  const point = e + 1; // where the decimal point falls in `digits`
  if (point <= -4 || point > 16) {
    const tail = digits.length > 1 ? `.${digits.slice(1)}` : '';
    return `${sign}${digits[0]}${tail}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}.0`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

// str.isprintable() is false for these categories (space excepted). Node's Unicode version may be
// newer than the interpreter's, which only matters for characters assigned in between.
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/** Python's repr() of a str. */
export function pyStrRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\t') out += '\\t';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch !== ' ' && UNPRINTABLE.test(ch)) {
      const cp = ch.codePointAt(0)!;
      out += cp < 0x100 ? `\\x${cp.toString(16).padStart(2, '0')}` : cp < 0x10000 ? `\\u${cp.toString(16).padStart(4, '0')}` : `\\U${cp.toString(16).padStart(8, '0')}`;
    } else out += ch;
  }
  return out + quote;
}

/** Python's repr() of a value json.loads made. */
export function pyRepr(v: PyValue): string {
  switch (v.t) {
    case 'str':
      return pyStrRepr(v.v);
    case 'int':
      return v.v.toString();
    case 'float':
      return pyFloatRepr(v.v);
    case 'bool':
      return v.v ? 'True' : 'False';
    case 'none':
      return 'None';
    case 'list':
      return `[${v.v.map(pyRepr).join(', ')}]`;
    case 'dict':
      return `{${[...v.v].map(([k, x]) => `${pyStrRepr(k)}: ${pyRepr(x)}`).join(', ')}}`;
  }
}

/** Python's str() (and f-string) of a value json.loads made: a str is itself, anything else its repr. */
export function pyStr(v: PyValue): string {
  return v.t === 'str' ? v.v : pyRepr(v);
}
