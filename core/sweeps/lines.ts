/** Splits bytes read from an offset into whole lines; a line still being written waits for its end. */
export class LineReader {
  private rest = Buffer.alloc(0);
  /** Bytes consumed so far, counting the partial line held back. */
  offset = 0;

  push(chunk: Buffer): string[] {
    this.offset += chunk.length;
    const buf = this.rest.length ? Buffer.concat([this.rest, chunk]) : chunk;
    const out: string[] = [];
    let start = 0;
    for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10, start)) {
      out.push(buf.subarray(start, i).toString('utf8'));
      start = i + 1;
    }
    this.rest = Buffer.from(buf.subarray(start));
    return out;
  }
}
