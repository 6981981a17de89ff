import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../core/base/appInfo';
import type { HarnessReply } from '../core/runtime/types';
import { onLines } from '../core/runtime/childProtocol';

/**
 * The unisolated baseline (bench/unisolated.py): the same harness and audit checks in one warm
 * CPython process with no fork, no bubblewrap, no seccomp and no audit hook. Only the bench talks
 * to it, with its own benign games; the isolated figures are divided by what it does.
 */
export class Unisolated {
  private readonly proc: ChildProcessWithoutNullStreams;
  private readonly waiting: { resolve: (line: string) => void; reject: (e: Error) => void }[] = [];
  private stderr = '';
  private seq = 0;

  constructor(python: string) {
    this.proc = spawn(python, ['-s', '-E', join(packageRoot(), 'bench', 'unisolated.py')], {
      env: { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', PYTHONDONTWRITEBYTECODE: '1', OPENBLAS_NUM_THREADS: '1', OMP_NUM_THREADS: '1', MKL_NUM_THREADS: '1' },
    });
    // The same line splitter as the fork server's replies: the two sides differ only in isolation.
    onLines(this.proc.stdout, (line) => this.waiting.shift()?.resolve(line));
    this.proc.stderr.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-2000)));
    // A baseline that died must fail the bench run, not hang it.
    this.proc.on('exit', (code) => {
      for (const w of this.waiting.splice(0)) w.reject(new Error(`the unisolated baseline exited (${code}): ${this.stderr}`));
    });
  }

  call(req: Record<string, unknown>): Promise<HarnessReply> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve: (line) => resolve(JSON.parse(line) as HarnessReply), reject });
      this.proc.stdin.write(JSON.stringify({ id: ++this.seq, ...req }) + '\n');
    });
  }

  close(): void {
    this.proc.stdin.end();
    this.proc.kill();
  }
}
