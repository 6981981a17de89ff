import type { Readable } from 'node:stream';

/**
 * Messages between the runtime pool and a Pyodide child process: one line each, over the child's
 * stdin (requests) and fd 3 (replies). A harness request or reply is already a JSON line, so it
 * travels as is behind a short prefix instead of being wrapped and escaped a second time: that
 * keeps one step() round trip cheap and a 20,000-step play() reply a single parse on arrival.
 *
 *   parent -> child   I<json ChildInit> | C<id> <timeoutMs> <harness json> | F (fresh state) | X
 *   child -> parent   Y<json Ready>     | R<id> <harness json>             | F<json Fatal>
 *                     | P<check id>  (the audit check running now, for blame if the call dies)
 */
export interface ChildInit {
  pyodideDir: string;
  /** native/*.py by file name: harness.py, sandbox.py and extension modules (audit_checks.py...). */
  files: Record<string, string>;
  /** Microseconds to poll for the next request after a reply (0 on one core, where it would stall the parent). */
  spinUs?: number;
  /** Where math_verify's wheels are (installed into the interpreter from local files at start). */
  wheelsDir?: string;
}
export interface ChildReady {
  coldMs: number;
  python: string;
}
export interface ChildFatal {
  id: number;
  message: string;
}

export const encodeInit = (m: ChildInit): string => `I${JSON.stringify(m)}\n`;
export const encodeCall = (id: number, timeoutMs: number, line: string): string => `C${id} ${timeoutMs} ${line}\n`;
export const encodeExit = (): string => 'X\n';
/** Restore the interpreter's pristine memory before the next environment. */
export const encodeFresh = (withMath = false): string => (withMath ? 'Fm\n' : 'F\n');
export const encodeReady = (m: ChildReady): string => `Y${JSON.stringify(m)}\n`;
export const encodeReply = (id: number, line: string): string => `R${id} ${line}\n`;
export const encodeFatal = (m: ChildFatal): string => `F${JSON.stringify(m)}\n`;

/** Splits "<id> <rest>" (and "<id> <n> <rest>") without regexes on a hot path. */
export function splitHead(s: string, from: number): [number, number] {
  const sp = s.indexOf(' ', from);
  return [Number(s.slice(from, sp)), sp + 1];
}

/**
 * A feed for text arriving in chunks: calls fn for each complete line (protocol lines never contain
 * a raw newline: JSON escapes it). With `keep`, a line that has not ended is held to its last
 * `keep` characters (output written by game code, which may never end a line).
 */
export function lineSplitter(fn: (line: string) => void, keep = Infinity): (chunk: string) => void {
  let buf = '';
  return (chunk) => {
    let start = 0;
    let nl = chunk.indexOf('\n');
    if (nl < 0) {
      buf += chunk;
      if (buf.length > keep) buf = buf.slice(-keep);
      return;
    }
    while (nl >= 0) {
      const line = buf + chunk.slice(start, nl);
      buf = '';
      fn(line);
      start = nl + 1;
      nl = chunk.indexOf('\n', start);
    }
    buf = chunk.slice(start);
    if (buf.length > keep) buf = buf.slice(-keep);
  };
}

/**
 * A Pyodide stream writer (`setStderr({ write })`) that calls fn for each complete line of what
 * Python writes to the fd, as UTF-8 with NUL characters dropped (as Pyodide's own line writer
 * does). An unended line is held to its last `keep` characters: game code can write to fd 2
 * directly, and Pyodide's own writer held such a line byte by byte until the process ran out of
 * memory, taking every session it hosted with it.
 */
export function boundedLineWriter(fn: (line: string) => void, keep = 65536): { write(buf: Uint8Array): number } {
  const decoder = new TextDecoder();
  const feed = lineSplitter(fn, keep);
  return {
    write(buf) {
      // stream: a character cut between two writes is decoded whole with the next one
      const text = decoder.decode(buf, { stream: true });
      feed(text.includes('\0') ? text.replaceAll('\0', '') : text);
      return buf.length;
    },
  };
}

/** Calls fn for each complete line of a text stream. */
export function onLines(stream: Readable, fn: (line: string) => void): void {
  stream.setEncoding('utf8');
  stream.on('data', lineSplitter(fn));
}
