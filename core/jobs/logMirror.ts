import { closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readSync, statSync, writeSync, fstatSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Splits a chunk read from `offset` into the complete lines it holds. Only whole lines are taken,
 * so the next read starts exactly where this one stopped: no gap, no duplicate. A final line
 * without a newline is taken only once the job has ended (nothing more can follow it), and a
 * line longer than a whole chunk is cut rather than stalling the tail forever.
 */
export function completeLines(data: Buffer, final: boolean, chunkWasFull: boolean): { take: Buffer; consumed: number; addNewline: boolean } {
  const nl = data.lastIndexOf(0x0a);
  if (nl >= 0) return { take: data.subarray(0, nl + 1), consumed: nl + 1, addNewline: false };
  if ((final || chunkWasFull) && data.length > 0) return { take: data, consumed: data.length, addNewline: true };
  return { take: Buffer.alloc(0), consumed: 0, addNewline: false };
}

/** The local copy of a job's log; its committed size is kept in SQLite beside the remote offset. */
export class LogMirror {
  constructor(readonly path: string) {}

  /** Drops bytes written after the last commit (a crash between append and commit). */
  reconcile(committedSize: number): void {
    if (!existsSync(this.path)) return;
    const size = statSync(this.path).size;
    if (size > committedSize) {
      const fd = openSync(this.path, 'r+');
      try {
        ftruncateSync(fd, committedSize);
      } finally {
        closeSync(fd);
      }
    }
  }

  append(text: Buffer): number {
    mkdirSync(dirname(this.path), { recursive: true });
    const fd = openSync(this.path, 'a');
    try {
      writeSync(fd, text);
      return fstatSync(fd).size;
    } finally {
      closeSync(fd);
    }
  }

  size(): number {
    return existsSync(this.path) ? statSync(this.path).size : 0;
  }

  /** Whole lines from `offset` (a line boundary), at most about `max` bytes. */
  read(offset: number, max: number): { text: string; nextOffset: number; size: number } {
    const size = this.size();
    if (offset >= size) return { text: '', nextOffset: size, size };
    const len = Math.min(max, size - offset);
    const buf = Buffer.alloc(len);
    const fd = openSync(this.path, 'r');
    try {
      readSync(fd, buf, 0, len, offset);
    } finally {
      closeSync(fd);
    }
    let end = len;
    if (offset + len < size) {
      const nl = buf.lastIndexOf(0x0a);
      end = nl >= 0 ? nl + 1 : len;
    }
    return { text: buf.subarray(0, end).toString('utf8'), nextOffset: offset + end, size };
  }
}
