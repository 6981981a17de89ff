import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { treeCpuMs } from '../../../bench/processCpu';

// Real processes: a grandchild that burns CPU, read live and again after it was reaped.

/** A shell that runs a Python busy loop of `ms` as its child and then waits for a line. */
function burner(ms: number) {
  const sh = spawn('sh', ['-c', `python3 -c "import time
t = time.process_time()
while time.process_time() - t < ${ms / 1000}: pass
print('done', flush=True)"; read line`], { stdio: ['pipe', 'pipe', 'inherit'] });
  const done = new Promise<void>((resolve) => sh.stdout.on('data', (d: Buffer) => d.toString().includes('done') && resolve()));
  return { sh, done };
}

/**
 * The tree's CPU less this process's own: what the descendants used. The test runner's own threads
 * (other test files in the same process, its workers) add to this process's time whenever they run,
 * so the tree total alone made the bounds below depend on what else the runner was doing.
 */
function descendantsMs(): number {
  const own = process.cpuUsage();
  return treeCpuMs()! - (own.user + own.system) / 1000;
}

describe.runIf(process.platform === 'linux')('CPU of the process tree', () => {
  it('counts a descendant’s CPU once, whether it is reaped by a descendant or not', async () => {
    const before = descendantsMs();
    // A burn long enough that counting it twice (the defect this guards) stands clear of what
    // else the descendants use meanwhile: interpreter start-up, and on a busy CI machine, helpers
    // left by earlier files in this worker read up to ~400 ms more.
    const burn = 1000;
    const { sh, done } = burner(burn);
    await done;
    // The Python process has exited and its shell reaped it: its time is in the shell's cutime.
    const whileShellLives = descendantsMs() - before;
    expect(whileShellLives).toBeGreaterThanOrEqual(burn - 50);
    expect(whileShellLives).toBeLessThan(2 * burn - 200);
    sh.stdin.end('\n');
    await once(sh, 'exit');
    // Now Node has reaped the shell: the same time, in this process's cutime, not twice.
    const afterReap = descendantsMs() - before;
    expect(afterReap).toBeGreaterThanOrEqual(burn - 50);
    expect(afterReap).toBeLessThan(whileShellLives + burn / 2);
  }, 20_000);
});
