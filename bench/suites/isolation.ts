import { probePython } from '../../core/runtime/native';
import { treeCpuMs } from '../processCpu';
import { median, type BenchRow, type BenchSuite } from '../types';
import { Unisolated } from '../unisolated';
import { cpuPerEnv, rate, variedPack, type Rate } from './audit';

type Item = { source: string; hint: string | null };

/**
 * The same audits without isolation (bench/unisolated.py): `procs` warm CPython processes, each
 * running the judge and the game in itself: no fork, no bubblewrap, no seccomp, no audit hook.
 */
async function unisolatedRate(items: Item[], procs: number, python: string): Promise<Rate> {
  const us = Array.from({ length: procs }, () => new Unisolated(python));
  try {
    await Promise.all(us.flatMap((u, i) => [0, 1].map((k) => u.call({ cmd: 'audit', source: items[(i * 2 + k) % items.length]!.source, options: { checks: ['spade.exec'] } }))));
    let next = 0;
    const cpu = treeCpuMs();
    const t = performance.now();
    await Promise.all(
      us.map(async (u) => {
        while (next < items.length) {
          const it = items[next++]!;
          const r = await u.call({ cmd: 'audit', source: it.source, options: { hint: it.hint } });
          if (!r.ok) throw new Error(`unisolated audit failed: ${r.error.message}`);
        }
      }),
    );
    const sec = (performance.now() - t) / 1000;
    return { perSec: items.length / sec, sec, cpuMsPerEnv: cpuPerEnv(cpu, items.length) };
  } finally {
    for (const u of us) u.close();
  }
}

const ENVS = 400;
const WORKERS = 2;
const ROUNDS = 3;

/**
 * Issue 34's audit.isolation_ratio: isolated audits (each environment forked into a walled process
 * of its own, the checks in a separate judge) over the same audits in one warm unisolated process
 * per worker. Same environments, same checks, same number of workers; rounds alternate so that
 * other load on the machine hits both sides alike.
 */
export const isolationSuite: BenchSuite = {
  prefix: 'audit.isolation_ratio',
  async run(log) {
    const py = probePython();
    if (!py) {
      log('no native python3: audit.isolation_ratio skipped');
      return [];
    }
    const items = variedPack(ENVS);
    const iso: Rate[] = [];
    const plain: Rate[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      iso.push(await rate(items, WORKERS));
      plain.push(await unisolatedRate(items, WORKERS, py.path));
      log(`round ${i + 1}: isolated ${iso[i]!.perSec.toFixed(1)} envs/s, unisolated ${plain[i]!.perSec.toFixed(1)} envs/s`);
    }
    const wallRatio = median(iso.map((r, i) => r.perSec / plain[i]!.perSec));
    const isolated = median(iso.map((r) => r.perSec));
    const unisolated = median(plain.map((r) => r.perSec));
    const cpuIso = median(iso.map((r) => r.cpuMsPerEnv ?? NaN));
    const cpuPlain = median(plain.map((r) => r.cpuMsPerEnv ?? NaN));
    // With both cores busy, throughput is 2,000 ms of CPU a second over the CPU an environment
    // costs: the CPU ratio is the throughput ratio at full use, and other developers' load on this
    // machine moves it far less than it moves wall-clock rates (docs/isolation-figures.md).
    const byCpu = Number.isFinite(cpuIso) && Number.isFinite(cpuPlain);
    const row: BenchRow = {
      id: 'audit.isolation_ratio',
      value: byCpu ? cpuPlain / cpuIso : wallRatio,
      unit: 'x',
      goal: { op: '>=', value: 0.75 },
      note:
        (byCpu ? `CPU per environment, every process: isolated ${cpuIso.toFixed(1)} ms; before (unisolated) ${cpuPlain.toFixed(1)} ms. ` : '') +
        `Wall clock: isolated ${isolated.toFixed(1)} envs/s, unisolated ${unisolated.toFixed(1)} envs/s (ratio ${wallRatio.toFixed(2)}). Unisolated: the same checks in one warm CPython process per worker (bench/unisolated.py: no fork, no bwrap, no seccomp, no audit hook). ${ENVS} varied seed-pack environments, all checks, ${WORKERS} workers, median of ${ROUNDS} alternating rounds`,
    };
    return [row];
  },
};
