/**
 * A reader for the Python literals a trainer prints with `print(dict)` or a logger: dicts, lists,
 * tuples, strings, numbers, True/False/None, nan/inf, and the scalar wrappers numpy 2 and torch
 * put in a repr (`np.float64(0.5)`, `tensor(0.5)`). It only reads data: a name or call that is not
 * one of those wrappers makes the whole value unreadable, so nothing in a log can run.
 */
export type PyValue = number | string | boolean | null | PyValue[] | { [k: string]: PyValue };

/** Calls whose single numeric argument is the value (reprs of numpy and torch scalars). */
const SCALAR_WRAPPERS = new Set([
  'np.float64', 'np.float32', 'np.float16', 'np.int64', 'np.int32', 'np.int16', 'np.int8', 'np.uint64', 'np.uint32', 'np.uint8', 'np.bool_',
  'numpy.float64', 'numpy.float32', 'numpy.int64', 'numpy.int32', 'float', 'int', 'tensor', 'torch.tensor',
]);

class Reader {
  i = 0;
  constructor(readonly s: string) {}

  fail(): never {
    throw new SyntaxError(`not a Python literal at ${this.i}`);
  }

  ws(): void {
    while (this.i < this.s.length && (this.s[this.i] === ' ' || this.s[this.i] === '\t')) this.i++;
  }

  value(depth: number): PyValue {
    if (depth > 64) this.fail();
    this.ws();
    const c = this.s[this.i];
    if (c === '{') return this.dict(depth);
    if (c === '[') return this.seq(']', depth);
    if (c === '(') return this.seq(')', depth);
    if (c === "'" || c === '"') return this.str();
    if (c === '-' || c === '+' || c === '.' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
    return this.name(depth);
  }

  dict(depth: number): { [k: string]: PyValue } {
    this.i++;
    const out: { [k: string]: PyValue } = {};
    for (;;) {
      this.ws();
      if (this.s[this.i] === '}') {
        this.i++;
        return out;
      }
      const k = this.value(depth + 1);
      this.ws();
      if (this.s[this.i] !== ':') this.fail();
      this.i++;
      const v = this.value(depth + 1);
      if (typeof k === 'string' || typeof k === 'number') out[String(k)] = v;
      this.ws();
      if (this.s[this.i] === ',') this.i++;
      else if (this.s[this.i] !== '}') this.fail();
    }
  }

  seq(close: string, depth: number): PyValue[] {
    this.i++;
    const out: PyValue[] = [];
    for (;;) {
      this.ws();
      if (this.s[this.i] === close) {
        this.i++;
        return out;
      }
      out.push(this.value(depth + 1));
      this.ws();
      if (this.s[this.i] === ',') this.i++;
      else if (this.s[this.i] !== close) this.fail();
    }
  }

  str(): string {
    const q = this.s[this.i]!;
    this.i++;
    let out = '';
    while (this.i < this.s.length) {
      const c = this.s[this.i]!;
      if (c === q) {
        this.i++;
        return out;
      }
      if (c === '\\') {
        const n = this.s[this.i + 1];
        const map: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '0': '\0' };
        if (n !== undefined && map[n] !== undefined) {
          out += map[n];
          this.i += 2;
          continue;
        }
        if (n === 'x' || n === 'u') {
          const len = n === 'x' ? 2 : 4;
          const hex = this.s.slice(this.i + 2, this.i + 2 + len);
          if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) this.fail();
          out += String.fromCharCode(parseInt(hex, 16));
          this.i += 2 + len;
          continue;
        }
        out += c;
        this.i++;
        continue;
      }
      out += c;
      this.i++;
    }
    return this.fail();
  }

  number(): number {
    const m = /^[+-]?(?:(?:\d[\d_]*)?\.?\d*(?:[eE][+-]?\d+)?|inf|nan)/.exec(this.s.slice(this.i, this.i + 64));
    const text = m?.[0] ?? '';
    if (!text || text === '-' || text === '+' || text === '.') {
      // `-inf` and `-nan` start with a sign then a name.
      const sign = this.s[this.i];
      if (sign === '-' || sign === '+') {
        const rest = /^(inf|nan)\b/.exec(this.s.slice(this.i + 1, this.i + 5));
        if (rest) {
          this.i += 1 + rest[0].length;
          return rest[0] === 'nan' ? NaN : sign === '-' ? -Infinity : Infinity;
        }
      }
      this.fail();
    }
    this.i += text.length;
    const n = Number(text.replace(/_/g, ''));
    if (Number.isNaN(n) && !/nan/.test(text)) this.fail();
    return n;
  }

  name(depth: number): PyValue {
    const m = /^[A-Za-z_][A-Za-z0-9_.]*/.exec(this.s.slice(this.i, this.i + 64));
    if (!m) this.fail();
    const word = m[0];
    this.i += word.length;
    if (word === 'True') return true;
    if (word === 'False') return false;
    if (word === 'None') return null;
    if (word === 'nan') return NaN;
    if (word === 'inf') return Infinity;
    this.ws();
    if (this.s[this.i] === '(' && SCALAR_WRAPPERS.has(word)) {
      this.i++;
      const v = this.value(depth + 1);
      this.ws();
      // torch's repr may carry keyword details: tensor(0.5, device='cuda:0')
      while (this.s[this.i] === ',') {
        this.i++;
        this.ws();
        const kw = /^[A-Za-z_][A-Za-z0-9_]*=/.exec(this.s.slice(this.i, this.i + 40));
        if (!kw) this.fail();
        this.i += kw[0].length;
        this.value(depth + 1);
        this.ws();
      }
      if (this.s[this.i] !== ')') this.fail();
      this.i++;
      if (typeof v !== 'number' && typeof v !== 'boolean') this.fail();
      return v;
    }
    return this.fail();
  }
}

/** Reads one literal from `text` starting at `from`; returns it and where it ended, or null. */
export function readPyLiteral(text: string, from = 0): { value: PyValue; end: number } | null {
  const r = new Reader(text);
  r.i = from;
  try {
    const value = r.value(0);
    return { value, end: r.i };
  } catch {
    return null;
  }
}
