import { spawn } from 'node:child_process';
import { mkdir, open, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileEntry, LogChunk, Transport } from './types';

/** The local machine as a job transport: plain files and /bin/sh for the few status commands. */
export class LocalTransport implements Transport {
  readonly label = 'local';

  exec(command: string, opts: { stdin?: string; signal?: AbortSignal } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn('/bin/sh', ['-c', command], { stdio: ['pipe', 'pipe', 'pipe'], ...(opts.signal ? { signal: opts.signal } : {}) });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
      child.stdin.end(opts.stdin ?? '');
    });
  }

  async readChunk(path: string, offset: number, max: number): Promise<LogChunk | null> {
    let fh;
    try {
      fh = await open(path, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
    try {
      const { size } = await fh.stat();
      const len = Math.max(0, Math.min(max, size - offset));
      const buf = Buffer.alloc(len);
      const { bytesRead } = len > 0 ? await fh.read(buf, 0, len, offset) : { bytesRead: 0 };
      return { data: buf.subarray(0, bytesRead), size };
    } finally {
      await fh.close();
    }
  }

  async list(dir: string): Promise<FileEntry[] | null> {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
      throw e;
    }
    const out: FileEntry[] = [];
    for (const name of names) {
      const path = join(dir, name);
      try {
        const st = await stat(path);
        out.push({ name, path, isDir: st.isDirectory(), size: st.size, mtime: st.mtimeMs / 1000 });
      } catch {
        // A file removed between readdir and stat (a run rotating its cache) is simply skipped.
      }
    }
    return out;
  }

  readFile(path: string): Promise<Buffer> {
    return readFile(path);
  }

  async writeFile(path: string, data: Buffer | string, mode = 0o644): Promise<void> {
    await writeFile(path, data, { mode });
  }

  async mkdirp(dir: string): Promise<void> {
    await mkdir(dir, { recursive: true });
  }

  close(): void {}
}
