import { probePython } from '../../core/runtime/native';
import { UnwalledPool } from '../forked';
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

/** The same audits on the app's path with its walls down (bench/forked.ts): each still in a freshly forked process. */
async function unwalledRate(items: Item[], workers: number, python: string): Promise<Rate> {
  const pool = new UnwalledPool(python, workers);
  try {
    // Warm-up as rate()'s: both servers (lean and full) started, numpy imported, before the clock runs.
    await Promise.all(Array.from({ length: workers * 2 }, (_, i) => pool.audit(items[i % items.length]!.source, { checks: ['spade.exec'] })));
    await pool.assertUnwalled();
    const cpu = treeCpuMs();
    const t = performance.now();
    await Promise.all(items.map((it) => pool.audit(it.source, { hint: it.hint })));
    const sec = (performance.now() - t) / 1000;
    return { perSec: items.length / sec, sec, cpuMsPerEnv: cpuPerEnv(cpu, items.length) };
  } finally {
    await pool.close();
  }
}

const ENVS = 400;
const WORKERS = 2;
const ROUNDS = 3;

/**
 * One side over the other, as the rows state it: by CPU of every process per environment where
 * /proc gives it, else by wall-clock throughput. With both cores busy, throughput is 2,000 ms of
 * CPU a second over the CPU an environment costs, so the CPU ratio is the throughput ratio at full
 * use, and other developers' load on this machine moves it far less than it moves wall-clock
 * rates (bench/notes/isolation-figures.md).
 */
function ratio(iso: Rate[], base: Rate[]): { value: number; wall: number; cpuIso: number; cpuBase: number; byCpu: boolean } {
  const wall = median(iso.map((r, i) => r.perSec / base[i]!.perSec));
  const cpuIso = median(iso.map((r) => r.cpuMsPerEnv ?? NaN));
  const cpuBase = median(base.map((r) => r.cpuMsPerEnv ?? NaN));
  const byCpu = Number.isFinite(cpuIso) && Number.isFinite(cpuBase);
  return { value: byCpu ? cpuBase / cpuIso : wall, wall, cpuIso, cpuBase, byCpu };
}

const perSec = (rs: Rate[]) => median(rs.map((r) => r.perSec)).toFixed(1);

/**
 * `audit.walls_ratio` (issue 45): isolated audits (AuditPool: the fork server inside bubblewrap,
 * each environment forked into a process of its own behind seccomp and the audit hook, the checks
 * in a separate judge) over the same audits on the same path with the walls down (UnwalledPool:
 * still a freshly forked process per environment, which the app keeps on purpose). What the walls
 * cost, and nothing else. Printed beside it, for the record, issue 34's `audit.isolation_ratio`
 * (the same isolated audits over one warm unisolated process per worker, bench/unisolated.py),
 * which counts the process per environment too and is out of reach by design. Same
 * environments, checks and workers on every side; rounds alternate so that other load on the
 * machine hits every side alike.
 */
export const isolationSuite: BenchSuite = {
  prefix: 'audit.walls_ratio',
  owns: ['audit.isolation_ratio'],
  async run(log) {
    const py = probePython();
    if (!py) {
      log('no native python3: audit.walls_ratio and audit.isolation_ratio skipped');
      return [];
    }
    const items = variedPack(ENVS);
    const iso: Rate[] = [];
    const unwalled: Rate[] = [];
    const plain: Rate[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      iso.push(await rate(items, WORKERS));
      unwalled.push(await unwalledRate(items, WORKERS, py.path));
      plain.push(await unisolatedRate(items, WORKERS, py.path));
      log(`round ${i + 1}: isolated ${iso[i]!.perSec.toFixed(1)} envs/s, forked without walls ${unwalled[i]!.perSec.toFixed(1)} envs/s, one warm process ${plain[i]!.perSec.toFixed(1)} envs/s`);
    }
    const walls = ratio(iso, unwalled);
    const old = ratio(iso, plain);
    const common = `${ENVS} varied seed-pack environments, all checks, ${WORKERS} workers, median of ${ROUNDS} alternating rounds`;
    const rows: BenchRow[] = [
      {
        id: 'audit.walls_ratio',
        value: walls.value,
        unit: 'x',
        goal: { op: '>=', value: 0.9 },
        note:
          (walls.byCpu ? `CPU per environment, every process: isolated ${walls.cpuIso.toFixed(1)} ms; before (forked, no walls) ${walls.cpuBase.toFixed(1)} ms. ` : '') +
          `Wall clock: isolated ${perSec(iso)} envs/s, forked without walls ${perSec(unwalled)} envs/s (ratio ${walls.wall.toFixed(2)}). Without walls: the same fork server, zygote, judge and fresh process per audit, run with no bubblewrap, no seccomp and no audit hook (bench/forked.ts). ${common}`,
      },
      {
        id: 'audit.isolation_ratio',
        value: old.value,
        unit: 'x',
        goal: { op: '>=', value: 0.75 },
        note:
          `For the record (issue 34's row, replaced by audit.walls_ratio: out of reach while every environment keeps its own process). ` +
          (old.byCpu ? `CPU per environment, every process: isolated ${old.cpuIso.toFixed(1)} ms; one warm unisolated process ${old.cpuBase.toFixed(1)} ms. ` : '') +
          `Wall clock: isolated ${perSec(iso)} envs/s, unisolated ${perSec(plain)} envs/s (ratio ${old.wall.toFixed(2)}). Unisolated: the same checks in one warm CPython process per worker (bench/unisolated.py: no fork, no bwrap, no seccomp, no audit hook). ${common}`,
      },
    ];
    return rows;
  },
};
