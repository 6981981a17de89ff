import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { collectSources } from '../../core/audit/sources';
import { sha256 } from '../../core/audit/sources';
import { RayExecutor } from '../../core/sweeps/rayExecutor';
import { auditWork, checkSetKey, itemKey } from '../../core/audit/sweepKind';
import type { SweepItem } from '../../core/sweeps/sweepStore';
import { probePython } from '../../core/runtime/native';
import { packageRoot } from '../../core/base/appInfo';
import type { BenchRow, BenchSuite } from '../types';

/** The Ray head of .ci/services.sh (Jobs API address, its venv's bin), or null. */
function ciRay(): { address: string; bin: string } | null {
  const file = process.env.SPADE_CI_RAY_ENV ?? join(process.env.SPADE_CI_DIR ?? '/tmp/spade-ci', 'ray.env');
  if (!existsSync(file)) return null;
  const env = Object.fromEntries(readFileSync(file, 'utf8').split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  return env.SPADE_CI_RAY_ADDRESS ? { address: env.SPADE_CI_RAY_ADDRESS, bin: env.SPADE_CI_RAY_BIN ?? '' } : null;
}

interface RayRate {
  perSec: number;
  sec: number;
}

/**
 * Envs per second while results arrive (first to last), so that what every job pays once (the
 * driver's start, the package) is left out and the row compares the tasks' own throughput.
 */
async function rayRate(address: string, rayBin: string, sources: string[], shardSize: number, tag: string): Promise<RayRate> {
  const python = probePython()?.path;
  if (!python) throw new Error('no interpreter for native audits');
  const ex = new RayExecutor({ address, python, driverPython: join(rayBin, 'python'), shardSize, envTimeoutSec: 120 });
  const options = {};
  const set = checkSetKey(options);
  const items: SweepItem[] = sources.map((s, i) => ({ key: itemKey(sha256(s), set), file: `bench:${i}`, sha256: sha256(s), name: `b${i}`, hint: null }));
  const byHash = new Map(sources.map((s) => [sha256(s), s]));
  const times: number[] = [];
  try {
    const work = auditWork(options);
    const h = await ex.submit(`bench${tag}${Date.now().toString(36)}`, 0, items, byHash, work);
    await ex.follow(h, work, (_k, a) => void (a && times.push(performance.now())), new AbortController().signal);
  } finally {
    await ex.close();
  }
  if (times.length !== sources.length) throw new Error(`${sources.length - times.length} environment(s) got no result`);
  const sec = (times.at(-1)! - times[0]!) / 1000;
  return { perSec: (times.length - 1) / sec, sec };
}

/** `audit.scale_ratio`: a pool audit on the Ray head with 2 workers (2 tasks) against 1 (one task). */
export const dispatchSuite: BenchSuite = {
  prefix: 'audit.scale_ratio',
  async run(log) {
    const ray = ciRay();
    if (!ray) {
      log('audit.scale_ratio: no Ray head (.ci/services.sh start-ray); skipped');
      return [];
    }
    const pack = collectSources(join(packageRoot(), 'resources', 'seed-pack'));
    // 400: at ~20 ms an environment, 80 left 1-2 s per round, and a task that started a few hundred
    // ms after the other (its fork server, numpy) was a sixth of a 2-task round.
    const n = 400;
    const sources = Array.from({ length: n }, (_, i) => `${pack[i % pack.length]!.source}\n_BENCH_VARIANT = ${i}\n`);
    // Alternating rounds (1, 2, 1, 2 tasks), each side's faster round kept: whichever side ran
    // first would otherwise also pay for the head's cold start (workers, the working_dir upload).
    const rounds: { one: RayRate[]; two: RayRate[] } = { one: [], two: [] };
    for (let r = 0; r < 2; r++) {
      log(`audit.scale_ratio: round ${r + 1}: ${n} environments on the Ray head, 1 task`);
      rounds.one.push(await rayRate(ray.address, ray.bin, sources.map((s) => `${s}_BENCH_RUN = ${10 * r + 1}\n`), n, `a${r}`));
      log(`audit.scale_ratio: round ${r + 1}: the same ${n} as 2 tasks`);
      rounds.two.push(await rayRate(ray.address, ray.bin, sources.map((s) => `${s}_BENCH_RUN = ${10 * r + 2}\n`), n / 2, `b${r}`));
    }
    const best = (xs: RayRate[]): RayRate => xs.reduce((a, b) => (b.perSec > a.perSec ? b : a));
    const one = best(rounds.one);
    const two = best(rounds.two);
    const each = (xs: RayRate[]): string => xs.map((x) => x.perSec.toFixed(1)).join(', ');
    return [
      {
        id: 'audit.scale_ratio',
        value: two.perSec / one.perSec,
        unit: 'x',
        goal: { op: '>=', value: 1.8 },
        note: `Ray head on this machine, ${n} varied seed-pack environments, all checks: ${one.perSec.toFixed(1)} envs/s with 1 worker (${one.sec.toFixed(1)} s), ${two.perSec.toFixed(1)} with 2 (${two.sec.toFixed(1)} s), first to last result, the faster of 2 alternating rounds (1 task: ${each(rounds.one)}; 2 tasks: ${each(rounds.two)})`,
      } satisfies BenchRow,
    ];
  },
};
