/**
 * The designer's reward per game against SPADE's own function, live: for the fixture's rows and a
 * seeded grid of means and regrets (negative ones, the ramps, the band's edges, both regret
 * settings), the workbench's spadeBlendScore equals what SPADE's recompute_delayed_env_rewards_blend
 * leaves in a sample's metadata (blend_raw, plateau, win_rate, proposer_masked), to the last bit.
 * SPADE runs from the checkout named by SPADE_SRC (tests/helpers/spade_blend_oracle.py builds the
 * samples; nothing of SPADE's logic is re-written). Without a checkout this file skips, and
 * tests/unit/spadeBlend.test.ts checks the same numbers kept once in tests/fixtures/spade-blend.json.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spadeBlendScore, type SpadeBlendParams } from '../../../core/api/spadeBlend';

const SPADE_SRC = process.env.SPADE_SRC ?? '';
const VENV = process.env.SPADE_WORKBENCH_VENV ?? join(__dirname, '..', '..', '..', 'scratch', 'python-venv');
const PYTHON = join(VENV, 'bin', 'python');
const have = SPADE_SRC !== '' && existsSync(join(SPADE_SRC, 'spade', 'core', 'utils', 'delayed_env_rewards.py'));
if (!have) console.warn('spadeBlend.diff: SPADE_SRC names no SPADE checkout; the live comparison is skipped (the fixture is checked by tests/unit/spadeBlend.test.ts)');

interface Row {
  meanReward: number | null;
  regret: number | null;
  overrides: Partial<SpadeBlendParams>;
}
type SpadeSays = { blend: number; plateau: number; win_rate: number; regret: number; masked: boolean };

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function rows(): Row[] {
  const fixture = JSON.parse(readFileSync(join(__dirname, '..', '..', 'fixtures', 'spade-blend.json'), 'utf8')) as { rows: Row[] };
  const out: Row[] = fixture.rows.map((r) => ({ meanReward: r.meanReward, regret: r.regret, overrides: r.overrides }));
  // A seeded grid: every 1/40 of the mean (the band's edges and ramps fall on it), regrets from -0.3 to 0.45.
  let s = 12345;
  const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let i = 0; i <= 40; i++) {
    for (const regret of [-0.3, -0.01, 0, 0.05, 0.15, 0.45, Math.round(rand() * 1e6) / 1e6 - 0.2]) {
      out.push({ meanReward: i / 40, regret, overrides: {} });
      if (i % 4 === 0) out.push({ meanReward: i / 40, regret, overrides: { regretFloor: false } });
    }
  }
  return out;
}

describe.skipIf(!have)("designer blend: the workbench's equals SPADE's recompute_delayed_env_rewards_blend (SPADE_SRC)", () => {
  it('gives the same blend, plateau, win rate and mask for every row', () => {
    const all = rows();
    const input = all.map((r) => ({ meanReward: r.meanReward, regret: r.regret, overrides: Object.fromEntries(Object.entries(r.overrides).map(([k, v]) => [snake(k), v])) }));
    const spade = JSON.parse(execFileSync(PYTHON, [join(__dirname, '..', '..', 'helpers', 'spade_blend_oracle.py'), SPADE_SRC], { input: JSON.stringify(input), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })) as SpadeSays[];
    expect(spade).toHaveLength(all.length);
    const diffs: string[] = [];
    all.forEach((r, i) => {
      const got = spadeBlendScore({ meanReward: r.meanReward, regret: r.regret }, r.overrides);
      const want = spade[i]!;
      if (got.blend !== want.blend || got.plateau !== want.plateau || got.winRate !== want.win_rate || got.masked !== want.masked) {
        diffs.push(`${JSON.stringify(r)}: workbench ${JSON.stringify({ blend: got.blend, plateau: got.plateau, winRate: got.winRate, masked: got.masked })}, SPADE ${JSON.stringify(want)}`);
      }
    });
    console.info(`spadeBlend.diff: ${all.length} rows compared with SPADE's function, ${diffs.length} differ`);
    expect(diffs).toEqual([]);
    // The grid reaches every part of the score: masked games, the plateau's top, its ramps and its floor.
    expect(spade.some((x) => x.masked)).toBe(true);
    expect(spade.some((x) => x.plateau === 1)).toBe(true);
    expect(spade.some((x) => x.plateau > 0 && x.plateau < 1)).toBe(true);
  });
});
