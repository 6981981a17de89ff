import { tmpdir } from 'node:os';
import { Slots } from '../core/base/slots';
import { join } from 'node:path';
import { finishAudit } from '../core/audit/pool';
import type { AuditOptions, EnvAudit } from '../core/audit/types';
import { ForkServer } from '../core/runtime/forkServer';
import { nativeTier, type NativeTier } from '../core/runtime/native';
import { runtimePaths } from '../core/runtime/paths';

const PRELOAD: Record<NativeTier, string[]> = { lean: ['numpy'], full: ['numpy', 'math_verify'] };

/**
 * `audit.walls_ratio`'s baseline: the app's own audit path with its walls taken down and nothing
 * else changed. The same fork server (native/cpython_main.py), zygote, judge process, executor
 * forked afresh for each audit, requests and host-side verdict (finishAudit) as AuditPool's; but
 * the server runs straight under this process (no bubblewrap, so no namespaces either), with no
 * seccomp filter (`seccomp: false` in its config) and no audit hook (`auditHook: false` per audit).
 * The rlimits and undumpable stay (a few system calls per process). Only the bench uses it, with
 * its own benign games: it is a yardstick, never a runtime.
 */
export class UnwalledPool {
  private readonly servers = new Map<NativeTier, ForkServer>();
  private readonly slots: Slots;
  private seq = 0;

  constructor(
    private readonly python: string,
    private readonly workers: number,
    private readonly envTimeoutSec = 120,
  ) {
    this.slots = new Slots(workers);
  }

  private server(tier: NativeTier): ForkServer {
    let s = this.servers.get(tier);
    if (!s || s.dead) {
      const config = JSON.stringify({ memoryMb: 2048, cpuSec: 3600, timeoutSec: this.envTimeoutSec, preload: PRELOAD[tier], seccomp: false });
      const env = { HOME: tmpdir(), PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', PYTHONDONTWRITEBYTECODE: '1', OPENBLAS_NUM_THREADS: '1', OMP_NUM_THREADS: '1', MKL_NUM_THREADS: '1' };
      s = new ForkServer(() => ({ cmd: this.python, args: ['-s', join(runtimePaths().nativeDir, 'cpython_main.py'), config], env }), { graceMs: 0 });
      this.servers.set(tier, s);
    }
    return s;
  }

  /** Fails unless every server started says its seccomp is off: a baseline with walls is no baseline. */
  async assertUnwalled(): Promise<void> {
    for (const s of this.servers.values()) {
      const facts = await s.start();
      if (facts.seccomp !== 'off') throw new Error(`the unwalled baseline's fork server has seccomp ${String(facts.seccomp)}`);
    }
  }

  /** One audit, as AuditPool.audit runs it (no cancel, no phases streamed). */
  async audit(source: string, options: AuditOptions = {}): Promise<EnvAudit> {
    await this.slots.take();
    const started = Date.now();
    try {
      const s = await this.server(nativeTier(source)).open(`audit-${++this.seq}`, { timeoutSec: this.envTimeoutSec, judge: true, auditHook: false });
      try {
        const r = await s.request({ cmd: 'audit', source, options: { ...options, phases: 'lasting' } }, this.envTimeoutSec * 1000);
        if (!r.ok) throw new Error(`unwalled audit failed: ${r.error.message}`);
        return finishAudit(r, s, options, Date.now() - started);
      } finally {
        s.close();
      }
    } finally {
      this.slots.give();
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.servers.values()].map((s) => s.shutdown()));
    this.servers.clear();
  }
}
