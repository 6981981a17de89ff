/**
 * A reader for the Python literals a trainer prints with `print(dict)` or a logger (dicts, lists,
 * tuples, strings, numbers, True/False/None, nan/inf, the scalar reprs numpy 2 and torch put in a
 * repr: `np.float64(0.5)`, `np.True_`, `tensor(0.5, device='cuda:0')`), and the JSON that Python's
 * `json.dumps` writes (`true`, `null`, `NaN`, `Infinity`), which JSON.parse refuses. It only reads
 * data: nothing is evaluated. Shared by the engine (job metrics) and the renderer (the log view),
 * so it lives beside the contract and imports nothing.
 *
 * A dict value that is not data (a call such as `__import__('os')`, `<object at 0x..>`,
 * `array([...])`) is skipped up to the next `,` or `}` at its own depth: that value is lost, the
 * rest of the dict is kept.
 */
/** Plain JavaScript data read from a Python literal (core/models/pythonJson.ts's PyValue is the other thing: a value that keeps its Python type). */
export type PyLiteralValue = number | string | boolean | null | PyLiteralValue[] | { [k: string]: PyLiteralValue };

/** Calls whose single numeric argument is the value (reprs of numpy and torch scalars). */
const SCALAR_WRAPPERS = new Set([
  'np.float64', 'np.float32', 'np.float16', 'np.longdouble', 'np.int64', 'np.int32', 'np.int16', 'np.int8',
  'np.uint64', 'np.uint32', 'np.uint16', 'np.uint8', 'np.bool_', 'np.bool',
  'numpy.float64', 'numpy.float32', 'numpy.float16', 'numpy.int64', 'numpy.int32', 'numpy.bool_',
  'float', 'int', 'tensor', 'torch.tensor',
]);
/** Bare names that are values: Python's, numpy 2's booleans, and the tokens json.dumps writes. */
const NAMES: Record<string, PyLiteralValue> = {
  True: true, False: false, None: null, nan: NaN, inf: Infinity, NaN: NaN, Infinity: Infinity,
  true: true, false: false, null: null, 'np.True_': true, 'np.False_': false, 'numpy.True_': true, 'numpy.False_': false,
  'np.nan': NaN, 'np.inf': Infinity,
};

/** What the reader gives back for a dict whose text ended before its closing brace. */
export const TRUNCATED = Symbol('truncated');

class Reader {
  i = 0;
  /** Values skipped because they were not data (counted, so a caller can say so). */
  skipped = 0;
  constructor(readonly s: string) {}

  fail(): never {
    throw new SyntaxError(`not a Python literal at ${this.i}`);
  }

  ws(): void {
    while (this.i < this.s.length && (this.s[this.i] === ' ' || this.s[this.i] === '\t' || this.s[this.i] === '\r')) this.i++;
  }

  value(depth: number): PyLiteralValue {
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

  /**
   * Moves past a value that could not be read: to the next `,` or closing bracket at depth 0,
   * stepping over quoted text and nested brackets. Returns false when the text ends first.
   */
  skipValue(): boolean {
    let depth = 0;
    while (this.i < this.s.length) {
      const c = this.s[this.i]!;
      if (c === "'" || c === '"') {
        const q = c;
        this.i++;
        while (this.i < this.s.length && this.s[this.i] !== q) this.i += this.s[this.i] === '\\' ? 2 : 1;
        this.i++;
        continue;
      }
      if (c === '(' || c === '[' || c === '{') depth++;
      else if (c === ')' || c === ']' || c === '}') {
        if (depth === 0) return true;
        depth--;
      } else if (c === ',' && depth === 0) return true;
      this.i++;
    }
    return false;
  }

  dict(depth: number): { [k: string]: PyLiteralValue } {
    this.i++;
    const out: { [k: string]: PyLiteralValue } = {};
    for (;;) {
      this.ws();
      if (this.i >= this.s.length) throw TRUNCATED_ERROR(out);
      if (this.s[this.i] === '}') {
        this.i++;
        return out;
      }
      const start = this.i;
      let valueStart = -1;
      let k: PyLiteralValue | undefined;
      let v: PyLiteralValue | undefined;
      try {
        k = this.value(depth + 1);
        this.ws();
        if (this.s[this.i] !== ':') this.fail();
        this.i++;
        this.ws();
        valueStart = this.i;
        v = this.value(depth + 1);
        this.ws();
        if (this.s[this.i] !== ',' && this.s[this.i] !== '}') this.fail();
      } catch (e) {
        if (e instanceof TruncatedDict) throw TRUNCATED_ERROR(out);
        // Not data: drop this pair and read on after it, from where its value (or key) began.
        this.skipped++;
        this.i = valueStart >= 0 ? valueStart : start;
        if (!this.skipValue()) throw TRUNCATED_ERROR(out);
        k = undefined;
      }
      if (k !== undefined && v !== undefined && (typeof k === 'string' || typeof k === 'number')) out[String(k)] = v;
      if (this.s[this.i] === ',') this.i++;
      else if (this.s[this.i] === '}') continue;
      else if (this.i >= this.s.length) throw TRUNCATED_ERROR(out);
      else {
        // A closing `)` or `]` where a dict goes on: the brackets do not match.
        this.fail();
      }
    }
  }

  seq(close: string, depth: number): PyLiteralValue[] {
    this.i++;
    const out: PyLiteralValue[] = [];
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
        const map: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '0': '\0', '/': '/', b: '\b', f: '\f' };
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
    const m = /^[+-]?(?:(?:\d[\d_]*)?\.?\d*(?:[eE][+-]?\d+)?)/.exec(this.s.slice(this.i, this.i + 64));
    const text = m?.[0] ?? '';
    if (!text || text === '-' || text === '+' || text === '.' || text === '-.' || text === '+.') {
      // `-inf`, `-nan`, `-Infinity` start with a sign then a name.
      const sign = this.s[this.i];
      if (sign === '-' || sign === '+') {
        const rest = /^(inf|nan|Infinity|NaN)\b/.exec(this.s.slice(this.i + 1, this.i + 10));
        if (rest) {
          this.i += 1 + rest[0].length;
          return rest[0].toLowerCase() === 'nan' ? NaN : sign === '-' ? -Infinity : Infinity;
        }
      }
      this.fail();
    }
    this.i += text.length;
    const n = Number(text.replace(/_/g, ''));
    if (Number.isNaN(n)) this.fail();
    return n;
  }

  name(depth: number): PyLiteralValue {
    const m = /^[A-Za-z_][A-Za-z0-9_.]*/.exec(this.s.slice(this.i, this.i + 64));
    if (!m) this.fail();
    const word = m[0];
    this.i += word.length;
    if (Object.prototype.hasOwnProperty.call(NAMES, word)) return NAMES[word]!;
    this.ws();
    if (this.s[this.i] === '(' && SCALAR_WRAPPERS.has(word)) {
      this.i++;
      const v = this.value(depth + 1);
      this.ws();
      // torch's repr may carry keyword details: tensor(0.5, device='cuda:0', dtype=torch.float64)
      while (this.s[this.i] === ',') {
        this.i++;
        this.ws();
        const kw = /^[A-Za-z_][A-Za-z0-9_]*=/.exec(this.s.slice(this.i, this.i + 40));
        if (!kw) this.fail();
        this.i += kw[0].length;
        // The detail's value is not needed (dtype=torch.float64, grad_fn=<MeanBackward0>): step over it.
        if (!this.skipValue()) this.fail();
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

class TruncatedDict extends Error {
  constructor(readonly partial: { [k: string]: PyLiteralValue }) {
    super('the dict ends before its closing brace');
  }
}
function TRUNCATED_ERROR(partial: { [k: string]: PyLiteralValue }): TruncatedDict {
  return new TruncatedDict(partial);
}

export interface PyLiteral {
  value: PyLiteralValue;
  end: number;
  /** Dict values that were not data and were left out. */
  skipped: number;
  /** The text ended inside a dict: `value` holds the pairs read before the end (outermost dict only). */
  truncated: boolean;
}

/** Reads one literal from `text` starting at `from`; returns it and where it ended, or null. */
export function readPyLiteral(text: string, from = 0): PyLiteral | null {
  const r = new Reader(text);
  r.i = from;
  try {
    const value = r.value(0);
    return { value, end: r.i, skipped: r.skipped, truncated: false };
  } catch (e) {
    // A line cut inside the outer dict keeps the pairs it had (a log line split by a buffer).
    if (e instanceof TruncatedDict && text[from] === '{') return { value: e.partial, end: text.length, skipped: r.skipped, truncated: true };
    return null;
  }
}
