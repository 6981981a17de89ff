import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ownerAlive, thisProcess } from '../../core/sweeps/sweepOwner';

// Who drives a sweep: a live process here, or no one (a process that has ended, an id the kernel
// gave to a later process, a data folder copied from another machine).
describe('sweep owners', () => {
  it('this process is alive; an ended one, one whose id now names a later process, and one on another host are not', () => {
    const me = thisProcess();
    expect(me).toMatchObject({ host: hostname(), pid: process.pid });
    expect(me.start).toMatch(/^\d+$/);
    expect(ownerAlive(me)).toBe(true);
    const ended = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    expect(ownerAlive({ host: hostname(), pid: Number(ended.stdout), start: null })).toBe(false);
    expect(ownerAlive({ ...me, start: String(Number(me.start) + 1) })).toBe(false);
    expect(ownerAlive({ ...me, host: `${hostname()}-elsewhere` })).toBe(false);
  });
});
