/**
 * The workbench's SPADE regret estimator against SPADE's own: the same game, the same hash seed,
 * the same scripted model. The workbench plays the game in its runtime (a real regret run, SPADE's
 * estimator); SPADE's numbers come from SPADE's own functions run from a checkout named by
 * SPADE_SRC (tests/helpers/spade_regret_oracle.py: _compute_hint_phase_for_game_async,
 * play_games_async, normalize_rewards_per_game, _finalize_regrets, with OUR scripted model and
 * hint generator standing in for the LLM). The numbers SPADE gave once are kept in
 * tests/fixtures/spade-regret.json (numbers only, with the commit), checked here without a checkout.
 *
 * The scripted model, the same on both sides: a hinted prompt is answered from the mode its
 * observation shows (the game's reset: seed % 3; 0 wins, 1 loses, 2 the model fails), an unhinted
 * one from the case's script in call order ("win", "lose", "error"), one play at a time.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Services } from '../../../core/services/services';
import { ingest } from '../../../core/memory/repository';
import { sha256 } from '../../../core/memory/parse';
import { modelPlayer } from '../../../core/episodes/agent';
import type { ChatClient, Completion } from '../../../core/models/client';
import { spadeHintSeeds } from '../../../core/episodes/spadeSeeds';
import { tempDir } from '../../helpers/tmp';

const DIR = join(__dirname, '..', '..', 'fixtures', 'spade-regret');
const GAME_FILE = 'mode_game.py';
const SOURCE = readFileSync(join(DIR, GAME_FILE), 'utf8');

interface Case {
  hashSeed: number;
  hint: string;
  nohintScript: string[];
  hintPlays: number;
  nohintPlays: number;
}
interface SpadeSays {
  hintSeeds: number[];
  rHint: number;
  rNoHint: number;
  regret: number;
  noHintRewards: number[];
  played: { num_instances: number; num_succeeded: number; num_failed: number };
  modelCalls: number;
}
const FIXTURE = JSON.parse(readFileSync(join(__dirname, '..', '..', 'fixtures', 'spade-regret.json'), 'utf8')) as { source: string; cases: (Case & { spade: SpadeSays })[] };

/** Our scripted model as the workbench's agent reaches it (a ChatClient's complete()). */
function scriptedClient(c: Case): Pick<ChatClient, 'complete'> & { calls: number } {
  const me = {
    calls: 0,
    async complete(messages: { role: string; content?: unknown }[]): Promise<Completion> {
      const text = String(messages.at(-1)?.content ?? '');
      let answer: string;
      if (text.includes('HINT:')) {
        const m = /seed (\d+) mode (\d)/.exec(text);
        if (!m) throw new Error(`a hinted prompt without its seed: ${text}`);
        answer = ['win', 'lose', 'error'][Number(m[2])]!;
      } else {
        answer = c.nohintScript[me.calls++] ?? 'script exhausted';
      }
      if (answer === 'error') throw new Error('scripted model failure');
      return { text: `\\boxed{${answer}}`, reasoning: null, toolCalls: [], finishReason: 'stop', usage: null, latencyMs: 0, attempts: 1 };
    },
  };
  return me;
}

const tmp = tempDir('spade-regret-diff-');
let s: Services;
const hash = sha256(SOURCE);

beforeAll(() => {
  s = new Services({ dataDir: tmp.dir, shell: 'in-process' });
  // Named as SPADE's file is: the estimator hashes NAME.py (core/episodes/estimator.ts spadeGamePath).
  ingest(s.db, { source: SOURCE, path: join(DIR, GAME_FILE), fileStem: 'mode_game', hint: FIXTURE.cases[0]!.hint });
});
afterAll(async () => {
  await s.close();
  tmp.cleanup();
});

async function workbench(c: Case) {
  const client = scriptedClient(c);
  const r = await s.episodes.regretMany({
    hashes: [hash],
    // Unused by SPADE's estimator (its own counts and seeds), required by the paired one.
    seeds: 1,
    seedStart: 0,
    estimator: 'spade',
    spade: { hintPlays: c.hintPlays, noHintPlays: c.nohintPlays, hashSeed: c.hashSeed },
    hintFor: () => c.hint,
    player: modelPlayer(client, { thinking: false, policy: { kind: 'scripted-test-model' } }),
    concurrency: 1,
    maxTurns: 4,
    runtime: 'pyodide',
  });
  const e = r.envs[0]!;
  const hinted = r.episodes.filter((x) => x.hint);
  return { e, hinted, plain: r.episodes.filter((x) => !x.hint), calls: client.calls };
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

function expectSame(c: Case, w: Awaited<ReturnType<typeof workbench>>, spade: SpadeSays): void {
  // Seeds from the path, the counts of both arms, and the failure rule's survivors.
  expect(sorted(w.hinted.map((x) => x.seed!))).toEqual(sorted(spade.hintSeeds));
  expect(w.hinted).toHaveLength(c.hintPlays);
  expect(w.plain).toHaveLength(c.nohintPlays);
  expect(w.plain.every((x) => x.seed === null)).toBe(true);
  expect(w.plain.filter((x) => !x.failed)).toHaveLength(spade.played.num_succeeded);
  expect(sorted(w.e.withoutHint.returns)).toEqual(sorted(spade.noHintRewards));
  // A failed hinted play counted 0.0, a failed unhinted one dropped, each failed unhinted play tried twice.
  expect(w.e.rHint).toBeCloseTo(spade.rHint, 12);
  expect(w.e.rNoHint).toBeCloseTo(spade.rNoHint, 12);
  expect(w.e.regret).toBeCloseTo(spade.regret, 12);
  expect(w.calls).toBe(spade.modelCalls);
}

describe("SPADE's regret estimator, against the numbers SPADE's functions gave (fixture)", () => {
  it('names the commit it came from', () => {
    expect(FIXTURE.source).toMatch(/github:spade-rl\/spade at 9b2b813e8e2bd35d5923c96aa7500e24704b2d8f/);
    expect(FIXTURE.cases.length).toBeGreaterThanOrEqual(2);
  });
  for (const [k, c] of FIXTURE.cases.entries()) {
    it(`case ${k + 1} (PYTHONHASHSEED=${c.hashSeed}): seeds, counts, failure rule and regret`, async () => {
      expect(sorted(spadeHintSeeds(GAME_FILE, c.hintPlays, c.hashSeed))).toEqual(sorted(c.spade.hintSeeds));
      expectSame(c, await workbench(c), c.spade);
    }, 300_000);
  }
});

const spadeSrc = process.env.SPADE_SRC;
const haveSpade = Boolean(spadeSrc && existsSync(join(spadeSrc, 'spade', 'core', 'orchestrator.py')));
if (!haveSpade) console.warn('[SPADE regret differential skipped] set SPADE_SRC to a SPADE checkout (with spade/core/orchestrator.py) to compare against SPADE\'s own functions');
describe.skipIf(!haveSpade)("SPADE's regret estimator, against SPADE's own functions (SPADE_SRC)", () => {
  const venv = process.env.SPADE_WORKBENCH_VENV ?? '';
  const python = existsSync(join(venv, 'bin', 'python')) ? join(venv, 'bin', 'python') : 'python3';
  const oracle = (c: Case): SpadeSays =>
    JSON.parse(
      execFileSync(python, [join(__dirname, '..', '..', 'helpers', 'spade_regret_oracle.py'), spadeSrc!, DIR, GAME_FILE, c.hint, JSON.stringify(c.nohintScript), String(c.hintPlays), String(c.nohintPlays)], {
        encoding: 'utf8',
        env: { ...process.env, PYTHONHASHSEED: String(c.hashSeed) },
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 240_000,
      }),
    ) as SpadeSays;
  for (const [k, c] of FIXTURE.cases.entries()) {
    it(`case ${k + 1} (PYTHONHASHSEED=${c.hashSeed}): SPADE's functions give the fixture's numbers and the workbench's`, async () => {
      const spade = oracle(c);
      const { spade: kept } = c;
      expect({ ...spade, hintSeeds: sorted(spade.hintSeeds) }).toMatchObject({ ...kept, hintSeeds: sorted(kept.hintSeeds) });
      console.info(`[SPADE regret differential] case ${k + 1}: ${spade.hintSeeds.length} hinted plays, ${spade.played.num_instances} unhinted (${spade.played.num_failed} failed and dropped), R(hint) ${spade.rHint}, R(no hint) ${spade.rNoHint}, regret ${spade.regret}`);
      expectSame(c, await workbench(c), spade);
    }, 300_000);
  }
});
