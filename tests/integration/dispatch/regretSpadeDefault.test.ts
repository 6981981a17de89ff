/**
 * `regret --pool` measures SPADE's regret unless told otherwise: hinted plays seeded from each
 * game's path (`hash(path + str(i)) % 2**31`, here under PYTHONHASHSEED 0 or --hash-seed), unhinted
 * plays reset with no seed, the estimator named in the report and in the stored run; the paired
 * estimator is `--estimator paired --seeds N`, and the two are never asked for at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDataDir } from '../../../core/memory/cliDb';
import { memoryCatalog } from '../../../core/episodes/catalog';
import { spadeGamePath } from '../../../core/episodes/estimator';
import { spadeHintSeeds } from '../../../core/episodes/spadeSeeds';
import { join } from 'node:path';
import { tempDir } from '../../helpers/tmp';
import { ciRay } from '../jobs/helpers';
import { cli, importPool, poolFiles } from './pool';

const ray = ciRay();

let tmp: ReturnType<typeof tempDir>;
beforeAll(async () => {
  tmp = tempDir('spade-regret-default-');
  await importPool(tmp.dir, poolFiles(2));
}, 60_000);
afterAll(() => tmp.cleanup());

type Report = { estimator: string; run_id: string; envs: { hash: string; hint_failed: boolean; returns_hint: number[]; returns_no_hint: number[] }[]; episodes: { hash: string; seed: number | null; slot?: number; hint: boolean }[] };

function stored(runId: string): { run: string; envs: string[]; unseeded: number[] } {
  const { db } = openDataDir(tmp.dir);
  try {
    const run = (db.prepare('SELECT estimator FROM model_runs WHERE id = ?').get(runId) as { estimator: string }).estimator;
    const envs = (db.prepare('SELECT estimator FROM model_run_envs WHERE run_id = ?').all(runId) as { estimator: string }[]).map((r) => r.estimator);
    const unseeded = (db.prepare('SELECT unseeded FROM model_run_episodes WHERE run_id = ? AND hint = 0 ORDER BY seed').all(runId) as { unseeded: number }[]).map((r) => r.unseeded);
    return { run, envs, unseeded };
  } finally {
    db.close();
  }
}

function pathOf(hash: string): string {
  const { db } = openDataDir(tmp.dir);
  try {
    return spadeGamePath(memoryCatalog(db).byHash(hash), hash);
  } finally {
    db.close();
  }
}

describe("regret --pool: SPADE's estimator by default", () => {
  it("plays SPADE's seeds and counts and names the estimator everywhere it stores a regret", async () => {
    const r = await cli(['regret', '--pool', '', '--policy', 'solution', '--hint-plays', '3', '--nohint-plays', '2', '--hash-seed', '5', '--max-turns', '8', '--json', '--quiet', '--data-dir', tmp.dir]);
    expect(r.code, r.err).toBe(0);
    const rep = JSON.parse(r.out) as Report;
    expect(rep.estimator).toBe('spade');
    expect(rep.envs.length).toBeGreaterThanOrEqual(1);
    for (const e of rep.envs) {
      const mine = rep.episodes.filter((x) => x.hash === e.hash);
      const hinted = mine.filter((x) => x.hint).map((x) => x.seed);
      expect(hinted).toEqual(e.hint_failed ? [] : spadeHintSeeds(pathOf(e.hash), 3, 5));
      expect(mine.filter((x) => !x.hint).map((x) => [x.seed, x.slot])).toEqual([
        [null, 0],
        [null, 1],
      ]);
    }
    expect(stored(rep.run_id)).toEqual({ run: 'spade', envs: rep.envs.map(() => 'spade'), unseeded: rep.envs.flatMap(() => [1, 1]) });
  }, 300_000);

  it('keeps paired seeds as a labelled option, and refuses a mix of the two', async () => {
    const p = await cli(['regret', '--pool', '', '--policy', 'solution', '--estimator', 'paired', '--seeds', '1', '--max-turns', '8', '--json', '--quiet', '--data-dir', tmp.dir]);
    expect(p.code, p.err).toBe(0);
    const rep = JSON.parse(p.out) as Report;
    expect(rep.estimator).toBe('paired');
    expect(rep.episodes.every((x) => x.seed === 0)).toBe(true);
    expect(stored(rep.run_id).run).toBe('paired');
    const mixed = await cli(['regret', '--pool', '', '--seeds', '2', '--data-dir', tmp.dir]);
    expect(mixed.code).toBe(2);
    expect(mixed.err).toMatch(/--seeds and --seed-start choose paired seeds/);
    const spadeOnly = await cli(['regret', '--pool', '', '--estimator', 'paired', '--seeds', '1', '--hint-plays', '4', '--data-dir', tmp.dir]);
    expect(spadeOnly.err).toMatch(/--hint-plays sets SPADE's estimator/);
    const bad = await cli(['regret', '--pool', '', '--estimator', 'median', '--data-dir', tmp.dir]);
    expect(bad.err).toMatch(/--estimator must be spade .* or paired/);
    // Runs of the two estimators are not compared as one quantity.
    const listed = JSON.parse((await cli(['runs', 'list', '--json', '--data-dir', tmp.dir])).out) as { rows: { id: string; estimator: string }[] };
    const spadeRun = listed.rows.find((x) => x.estimator === 'spade')!.id;
    const compare = await cli(['runs', 'compare', spadeRun, rep.run_id, '--data-dir', tmp.dir]);
    expect(compare.code).not.toBe(0);
    expect(compare.err).toMatch(/not comparable/);
  }, 300_000);
});

describe.skipIf(!ray)("regret --pool --on ray: SPADE's estimator on a node", () => {
  it('plays the unseeded plays unseeded there, and gives what this machine gives', async () => {
    const args = ['regret', '--pool', '', '--policy', 'solution', '--hint-plays', '2', '--nohint-plays', '2', '--max-turns', '8', '--json', '--quiet', '--data-dir', tmp.dir];
    const here = JSON.parse((await cli(args)).out) as Report;
    const there = await cli([...args, '--on', `ray://${new URL(ray!.address).host}`, '--ray-python', join(ray!.bin, 'python')]);
    expect(there.code, there.err).toBe(0);
    const r = JSON.parse(there.out) as Report;
    expect(there.out).not.toContain('went another way');
    expect(r.estimator).toBe('spade');
    const shape = (x: Report) => x.envs.map((e) => [e.hash, e.returns_hint, [...e.returns_no_hint].sort()]).sort();
    expect(shape(r)).toEqual(shape(here));
    expect(r.episodes.filter((x) => !x.hint).every((x) => x.seed === null)).toBe(true);
  }, 600_000);
});
