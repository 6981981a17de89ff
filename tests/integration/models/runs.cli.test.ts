/**
 * `play` keeps every model run in the library, and the numbers it measured are the ones every other
 * place shows: `search --json`, `runs show|compare` and an export's env_memory.json. A dead
 * endpoint is "not measured" with its errors, never regret 0. Real SQLite, real Pyodide, and the
 * stand-in OpenAI-compatible server (tests/helpers) as two different "models".
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { main } from '../../../core/cli/main';
import type { CliIO } from '../../../core/cli/command';
import { openDataDir } from '../../../core/memory/cliDb';
import { ingest } from '../../../core/memory/repository';
import { tempDir } from '../../helpers/tmp';
import { startStandIn, type StandIn } from '../../helpers/standInOpenAi';
import { GUESS_GAME } from './guessGame';

const tmp = tempDir('spade-runs-cli-');
afterAll(() => tmp.cleanup());
let server: StandIn | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIO = { out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`) };
  const code = await main(args, io);
  return { code, out, err };
}

const first = (b: Record<string, unknown>) => String((b.messages as { content: string }[])[0]!.content);

interface PlayJson {
  run_id: string;
  status: string;
  failed: string | null;
  episodes: { return: number | null; failed: boolean; error: string | null }[];
  regret: { env: string; hash: string; model: string; run_id: string; regret: number | null; win_rate: number | null; r_hint: number | null; r_no_hint: number | null; difficulty_score: number | null; not_measured: string | null; recorded_regret: number | null; skill: string | null; failed: number }[];
}

describe('model runs over the CLI', () => {
  it('play records runs; search, runs show/compare and export show the same regret and win rate; a dead endpoint is not measured', async () => {
    // Model "a" reads the hint (wins with it, never without); model "b" also always wins Alpha.
    server = await startStandIn((b) => {
      const text = first(b);
      const wins = text.includes('HINT: ') || (b.model === 'b' && text.includes('Alpha'));
      return { content: wins ? 'so \\boxed{7}' : 'I guess \\boxed{3}' };
    });
    const dir = join(tmp.dir, 'lib');
    const { db } = openDataDir(dir);
    for (const [name, k] of [['Alpha', 1], ['Beta', 2]] as const) {
      ingest(db, { source: GUESS_GAME.replace('Guess my number', `${name}: guess my number`).replace('class GuessEnv', `class ${name}Env`), path: join(dir, `game_00001_00${k}_logical_deduction.py`), fileStem: `game_00001_00${k}_logical_deduction`, hint: 'pick 7', skill: 'Logical Deduction', stats: { regret: 0.5, winRate: 0.4 } });
    }
    db.close();
    const play = async (model: string, url = server!.url): Promise<PlayJson> => {
      const r = await cli(['play', '--selection', 'guess', '--data-dir', dir, '--endpoint', url, '--model', model, '--seeds', '2', '--concurrency', '2', '--retries', '0', '--runtime', 'pyodide', '--json']);
      expect(r.code).toBe(0);
      return JSON.parse(r.out) as PlayJson;
    };
    const a = await play('a');
    const b = await play('b');
    const byEnv = (j: PlayJson) => Object.fromEntries(j.regret.map((x) => [x.env, x]));
    expect(Object.keys(byEnv(a)).sort()).toEqual(['AlphaEnv', 'BetaEnv']);
    for (const x of a.regret) expect(x).toMatchObject({ model: 'a', run_id: a.run_id, regret: 1, win_rate: 0, r_hint: 1, r_no_hint: 0, difficulty_score: 0, not_measured: null, recorded_regret: 0.5, skill: 'Logical Deduction' });
    const alphaB = b.regret.find((x) => x.env.startsWith('Alpha'))!;
    const betaB = b.regret.find((x) => x.env.startsWith('Beta'))!;
    expect(alphaB).toMatchObject({ regret: 0, win_rate: 1, model: 'b' });
    expect(betaB).toMatchObject({ regret: 1, win_rate: 0 });

    // search --json: the chosen model's numbers, the imported ones kept apart.
    const s = JSON.parse((await cli(['search', 'guess', '--data-dir', dir, '--model', 'a', '--json'])).out) as { rows: { name: string; win_rate: number; measured_regret: number; model: string; run_id: string; recorded_regret: number; recorded_win_rate: number; skill: string }[] };
    expect(s.rows).toHaveLength(2);
    for (const row of s.rows) expect(row).toMatchObject({ model: 'a', run_id: a.run_id, win_rate: 0, measured_regret: 1, recorded_regret: 0.5, recorded_win_rate: 0.4, skill: 'Logical Deduction' });
    const sb = JSON.parse((await cli(['search', 'alpha', '--data-dir', dir, '--model', 'b', '--json'])).out) as { rows: { win_rate: number; measured_regret: number; run_id: string }[] };
    expect(sb.rows[0]).toMatchObject({ win_rate: 1, measured_regret: 0, run_id: b.run_id });

    // runs list / show / compare
    const list = JSON.parse((await cli(['runs', 'list', '--data-dir', dir, '--json'])).out) as { total: number; rows: { id: string; model: string; status: string }[] };
    expect(list.rows.map((r) => [r.id, r.model, r.status]).sort()).toEqual([[a.run_id, 'a', 'done'], [b.run_id, 'b', 'done']].sort());
    const show = await cli(['runs', 'show', a.run_id, '--data-dir', dir]);
    expect(show.out).toMatch(/8 of 8 episodes recorded/);
    expect(show.out).toMatch(/AlphaEnv\s+R\(hint\) 1\.000\s+R\(no hint\) 0\.000\s+regret 1\.000\s+win rate 0\.000/);
    const cmp = await cli(['runs', 'compare', a.run_id, b.run_id, '--data-dir', dir]);
    expect(cmp.code).toBe(0);
    expect(cmp.out).toMatch(/AlphaEnv\s+1\.000\s+0\.000\s+-1\.000\s+0\.00\s+1\.00\s+\+1\.000/);
    expect(cmp.out).toMatch(/BetaEnv\s+1\.000\s+1\.000\s+\+0\.000/);
    expect(cmp.out).toMatch(/most apart: AlphaEnv/);
    const cj = JSON.parse((await cli(['runs', 'compare', a.run_id, b.run_id, '--data-dir', dir, '--json'])).out) as { rows: { envName: string; regretDelta: number; winRateDelta: number }[] };
    expect(cj.rows.find((r) => r.envName === 'AlphaEnv')).toMatchObject({ regretDelta: -1, winRateDelta: 1 });
    expect((await cli(['runs', 'show', 'nope', '--data-dir', dir])).code).toBe(2);

    // A dead endpoint: every episode failed with its error, nothing measured, never a 0.
    const dead = await play('a', 'http://127.0.0.1:9/v1');
    expect(dead.failed).toBe('8 of 8 episodes failed');
    expect(dead.episodes.every((e) => e.failed && e.return === null && !!e.error)).toBe(true);
    for (const x of dead.regret) expect(x).toMatchObject({ regret: null, win_rate: null, r_hint: null, r_no_hint: null, failed: 4 });
    expect(dead.regret[0]!.not_measured).toMatch(/4 of 4 episodes failed/);
    const deadText = await cli(['runs', 'show', dead.run_id, '--data-dir', dir]);
    expect(deadText.out).toMatch(/not measured \(4 of 4 episodes failed/);
    expect(deadText.out).toMatch(/failed: seed 0 with hint: .+/);
    // The library still shows model a's last real measurement, not the dead run.
    const after = JSON.parse((await cli(['search', 'guess', '--data-dir', dir, '--model', 'a', '--json'])).out) as { rows: { measured_regret: number; run_id: string }[] };
    for (const row of after.rows) expect(row).toMatchObject({ measured_regret: 1, run_id: a.run_id });

    // Export: env_memory.json carries the measured numbers (the newest measurement; here model b's).
    const out = join(tmp.dir, 'export');
    expect((await cli(['export', '--all', '--data-dir', dir, out])).code).toBe(0);
    const mem = JSON.parse(readFileSync(join(out, 'env_memory.json'), 'utf8')) as { actor_win_rate: number; regret: number; metadata: Record<string, unknown> }[];
    const alphaMem = mem.find((m) => String(m.metadata.class_name) === 'AlphaEnv')!;
    expect(alphaMem).toMatchObject({ actor_win_rate: 1, regret: 0 });
    expect(alphaMem.metadata).toMatchObject({ measured_by: 'b', run_id: b.run_id, recorded_regret: 0.5, recorded_win_rate: 0.4 });
  }, 900_000);
});
