// The designer's reward per game (issue 44) computed from stored rows: a design round's games as
// SQLite keeps them, the library's sort expression against the JavaScript blend, and the query
// language's sort: key. Real SQLite throughout (a temporary file with every migration).
import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openDatabase, type Db } from '../../core/memory/db';
import { createRound, finishGame, finishRound, roundView, startGame } from '../../core/design/designStore';
import type { GameRecord, PlayOutcome } from '../../core/design/attempt';
import { blendParts } from '../../core/api/blendParts';
import { SPADE_BLEND_DEFAULTS, spadeBlendScore, type SpadeBlendParams } from '../../core/api/spadeBlend';
import { blendSql } from '../../core/memory/blendSql';
import { hasOperators, parseQuery } from '../../core/memory/query';
import { DomainError } from '../../core/errors';
import { tempDir } from '../helpers/tmp';
import { getEnvironmentByHash, ingest } from '../../core/memory/repository';
import { sha256 } from '../../core/memory/parse';
import { gameSource } from '../integration/memory/fixtures';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function db(): Db {
  const tmp = tempDir('spade-blend-stored-');
  const d = openDatabase(join(tmp.dir, 'workbench.sqlite'));
  cleanups.push(() => {
    d.close();
    tmp.cleanup();
  });
  return d;
}

const game = (over: Partial<GameRecord>): GameRecord => ({
  skill: 'Logical Deduction',
  attempts: [],
  accepted: true,
  code: null,
  className: null,
  hint: 'h',
  hintMessages: null,
  hintError: null,
  hintLeak: null,
  play: null,
  playError: null,
  cls: null,
  difficultyScore: null,
  parents: [],
  ...over,
});
const play = (rNoHint: number, regret: number, winRate: number): PlayOutcome => ({ rHint: rNoHint + regret, rNoHint, regret, winRate, hintedWinRate: 1, episodes: 4, failed: 0 });

describe('a design round read back from SQLite', () => {
  it('scores each game from its stored mean unhinted reward and regret; not measured is null, never 0', () => {
    const d = db();
    createRound(d, 'r1', { count: 5 });
    const rows: [GameRecord][] = [
      // Partial rewards: every unhinted play scored 0.5, so the share of wins is 1.0 but SPADE's win_rate is 0.5.
      [game({ play: play(0.5, 0.075, 1.0) })],
      // Always won (mean 1.0): off the plateau, the regret term alone.
      [game({ play: play(1.0, 0.3, 1.0) })],
      // Accepted, but its play failed: no regret was measured.
      [game({ playError: 'the agent endpoint refused the connection' })],
      // Rejected: no blend at all.
      [game({ accepted: false, hint: null })],
      // On the left ramp (0.275 is half way down it) with a negative regret (floored to 0).
      [game({ play: play(0.275, -0.2, 0.5) })],
    ];
    rows.forEach(([g], i) => {
      startGame(d, 'r1', i, g.skill);
      const source = gameSource(i + 1);
      ingest(d, { source, path: `g${i}.py` });
      const env = getEnvironmentByHash(d, sha256(source))!;
      finishGame(d, 'r1', i, g, g.accepted ? { id: env.id, hash: env.hash } : null);
    });
    // A play stored with the estimator that measured its regret; one stored before estimators had names was paired seeds.
    d.prepare("UPDATE design_games SET play = json_set(play, '$.estimator', 'spade') WHERE round_id = 'r1' AND idx = 1").run();
    finishRound(d, 'r1', 'done');
    const v = roundView(d, 'r1')!;
    const b = v.games.map((g) => g.spade_blend);
    expect(b[0]).toMatchObject({ blend: 0.6 + 0.4 * (0.075 / 0.15), plateau: 1, plateau_term: 0.6, mean_reward: 0.5, regret: 0.075, masked: false, estimator: 'paired' });
    expect(b[0]!.regret_term).toBe(spadeBlendScore({ meanReward: 0.5, regret: 0.075 }).regretTerm);
    expect(b[0]!.params).toEqual(SPADE_BLEND_DEFAULTS);
    expect(b[1]).toMatchObject({ blend: 0.4, plateau: 0, plateau_term: 0, regret_term: 0.4, regret_norm: 1, estimator: 'spade' });
    expect(v.games[1]!.regret_estimator).toBe('spade');
    expect(b[2]).toBeNull();
    expect(v.games[2]!.play_error).toMatch(/refused/);
    expect(b[3]).toBeNull();
    expect(b[4]).toMatchObject({ plateau: spadeBlendScore({ meanReward: 0.275, regret: 0 }).plateau, regret_term: 0, masked: false });
    expect(b[4]!.plateau).toBeCloseTo(0.5, 12);
    // Every part adds up as SPADE adds it.
    for (const x of b) if (x) expect(x.plateau_term + x.regret_term).toBe(x.blend);
  });
});

describe('blendParts from stored numbers', () => {
  it('is null for a missing or unreadable number, and names the estimator only when one is stored', () => {
    for (const [m, r] of [
      [null, 0.1],
      [0.5, null],
      [undefined, 0.1],
      [0.5, Number.NaN],
      ['0.5', 0.1],
      [0.5, Infinity],
    ] as const) {
      expect(blendParts(m, r)).toBeNull();
    }
    expect(blendParts(0.5, 0.15)!.blend).toBe(1);
    expect(blendParts(0.5, 0.15, 'paired')!.estimator).toBe('paired');
    expect(blendParts(0.5, 0.15, '')!.estimator).toBeNull();
    expect(blendParts(0.5, 0.15, 7)!.estimator).toBeNull();
    // Masked negatives appear only under settings other than the recipes' (no floor here).
    const off: SpadeBlendParams = { ...SPADE_BLEND_DEFAULTS, regretFloor: false };
    expect(blendParts(0.0, -0.3, null, off)).toMatchObject({ masked: true, blend: 0.4 * (-0.3 / 0.15) });
  });
});

interface FixtureRow {
  meanReward: number | null;
  regret: number | null;
  overrides: Partial<SpadeBlendParams>;
}
const FIXTURE = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'spade-blend.json'), 'utf8')) as { rows: FixtureRow[] };

describe("the library's sort expression (blendSql)", () => {
  const sqlite = new Database(':memory:');
  const sqlBlend = (mean: number | null, regret: number | null, p: SpadeBlendParams = SPADE_BLEND_DEFAULTS) =>
    (sqlite.prepare(`SELECT ${blendSql('m', 'r', p)} AS b FROM (SELECT ? AS m, ? AS r)`).get(mean, regret) as { b: number | null }).b;

  it("equals the JavaScript blend to the last bit on SPADE's fixture rows and a grid", () => {
    let compared = 0;
    for (const row of FIXTURE.rows) {
      if (row.meanReward === null || row.regret === null) continue;
      const p = { ...SPADE_BLEND_DEFAULTS, ...row.overrides };
      expect(sqlBlend(row.meanReward, row.regret, p), JSON.stringify(row)).toBe(spadeBlendScore(row, p).blend);
      compared++;
    }
    expect(compared).toBeGreaterThan(30);
    for (let i = -4; i <= 24; i++) {
      for (const regret of [-0.5, -0.01, 0, 0.03, 0.075, 0.1, 0.15, 0.2, 1, 3]) {
        const mean = i / 20;
        expect(sqlBlend(mean, regret), `${mean} ${regret}`).toBe(spadeBlendScore({ meanReward: mean, regret }).blend);
      }
    }
  });

  it('is NULL when either number is missing (sorted last, never scored as 0)', () => {
    expect(sqlBlend(null, 0.1)).toBeNull();
    expect(sqlBlend(0.5, null)).toBeNull();
  });
});

describe('sort: in the query language', () => {
  it('orders by a named key, highest first (names A first), without narrowing the selection', () => {
    expect(parseQuery('sort:blend').sort).toEqual({ field: 'blend', dir: 'desc' });
    expect(parseQuery('tag:x sort:blend:asc').sort).toEqual({ field: 'blend', dir: 'asc' });
    expect(parseQuery('sort:name').sort).toEqual({ field: 'name', dir: 'asc' });
    expect(parseQuery('sort:regret').sort).toEqual({ field: 'measuredRegret', dir: 'desc' });
    expect(parseQuery('sort:recorded').sort).toEqual({ field: 'regret', dir: 'desc' });
    expect(parseQuery('maze').sort).toBeNull();
    // Being typed: `sort:` alone is no condition yet.
    expect(parseQuery('sort:').sort).toBeNull();
    expect(hasOperators(parseQuery('sort:blend'))).toBe(false);
    expect(parseQuery('sort:blend').match).toBeNull();
  });

  it('refuses an unknown key or direction, or two sorts, saying what it takes', () => {
    for (const q of ['sort:bogus', 'sort:blend:sideways', 'sort:blend:asc:x', 'sort:__proto__', 'sort:constructor']) {
      expect(() => parseQuery(q), q).toThrow(DomainError);
      expect(() => parseQuery(q), q).toThrow(/sort: takes blend, regret/);
    }
    expect(() => parseQuery('sort:blend sort:name')).toThrow(/one sort:/);
  });
});
