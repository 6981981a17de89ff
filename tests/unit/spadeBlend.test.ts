import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { designBlend } from '../../core/design/blend';
import { SPADE_BLEND_DEFAULTS, spadeBlendScore, spadePlateau, type SpadeBlendParams } from '../../core/api/spadeBlend';

// Expected numbers came from running SPADE's own blend once (9b2b813); how is in the fixture's "how".
interface Row {
  meanReward: number | null;
  regret: number | null;
  overrides: Partial<SpadeBlendParams>;
  spade: { blend: number; plateau: number; win_rate: number; regret: number; masked: boolean };
}
const FIXTURE = JSON.parse(
  readFileSync(join(__dirname, '..', 'fixtures', 'spade-blend.json'), 'utf8'),
) as { source: string; rows: Row[] };

describe('spadeBlendScore against SPADE blend_raw (tests/fixtures/spade-blend.json)', () => {
  it('has the pinned commit and enough rows to cover the band, the ramps, the floor and masking', () => {
    expect(FIXTURE.source).toContain('9b2b813');
    expect(FIXTURE.rows.length).toBeGreaterThan(40);
    expect(FIXTURE.rows.some((r) => r.spade.masked)).toBe(true);
    expect(FIXTURE.rows.some((r) => r.regret === null)).toBe(true);
    expect(FIXTURE.rows.some((r) => r.meanReward === null)).toBe(true);
  });

  for (const row of FIXTURE.rows) {
    it(`mean ${String(row.meanReward)}, regret ${String(row.regret)}, ${JSON.stringify(row.overrides)}`, () => {
      const got = spadeBlendScore({ meanReward: row.meanReward, regret: row.regret }, row.overrides);
      // Same IEEE operations in the same order as SPADE, so equal to the last bit.
      expect(got.blend).toBe(row.spade.blend);
      expect(got.plateau).toBe(row.spade.plateau);
      expect(got.winRate).toBe(row.spade.win_rate);
      expect(got.masked).toBe(row.spade.masked);
      expect(got.regretMeasured).toBe(row.regret !== null);
      expect(got.plateauTerm + got.regretTerm).toBe(got.blend);
    });
  }
});

describe('spadeBlendScore defaults and bad input', () => {
  it('uses the recipes\u2019 settings by default', () => {
    expect(SPADE_BLEND_DEFAULTS).toEqual({
      plateauWeight: 0.6, regretWeight: 0.4, regretScale: 0.15, regretFloor: true,
      plateauLo: 0.4, plateauHi: 0.6, plateauRamp: 0.25,
    });
    const s = spadeBlendScore({ meanReward: 0.5, regret: 0.15 });
    expect(s.blend).toBe(1);
    expect(s.params).toEqual(SPADE_BLEND_DEFAULTS);
  });

  it('is not the workbench 0.15-0.85 band: a 0.2 win rate earns nothing from the plateau', () => {
    expect(spadePlateau(0.15, 0.4, 0.6, 0.25)).toBe(0);
    expect(spadeBlendScore({ meanReward: 0.85, regret: 0 }).blend).toBe(0);
  });

  it('never lets floored regret push the score below 0 or above the weights', () => {
    expect(spadeBlendScore({ meanReward: 0.5, regret: -5 }).regretTerm).toBe(0);
    expect(spadeBlendScore({ meanReward: 0.5, regret: 50 }).regretTerm).toBe(0.4);
  });

  it('rejects non-finite and hostile input with a clear error', () => {
    expect(() => spadeBlendScore({ meanReward: Number.NaN, regret: 0 })).toThrow(/meanReward must be a finite number/);
    expect(() => spadeBlendScore({ meanReward: 0.5, regret: Infinity })).toThrow(/regret must be a finite number/);
    expect(() => spadeBlendScore({ meanReward: '0.5' as unknown as number, regret: 0 })).toThrow(/finite number/);
    expect(() => spadeBlendScore({ meanReward: 0.5, regret: 0 }, { regretScale: 0 })).toThrow(/regretScale must not be 0/);
    expect(() => spadeBlendScore({ meanReward: 0.5, regret: 0 }, { plateauRamp: 0 })).toThrow(/plateauRamp/);
    expect(() => spadeBlendScore({ meanReward: 0.5, regret: 0 }, { plateauLo: 0.7 })).toThrow(/band is empty/);
    // A prototype-polluting override changes nothing it should not.
    const evil = JSON.parse('{"__proto__": {"regretWeight": 9}}') as Partial<SpadeBlendParams>;
    expect(spadeBlendScore({ meanReward: 0.5, regret: 0.15 }, evil).blend).toBe(1);
  });
});

describe('designBlend (a design round game, as design --json prints it)', () => {
  it('reads the plateau at the mean unhinted reward, not the share of wins', () => {
    // Partial rewards: every play scores 0.5 (share of wins 1.0, mean 0.5): SPADE pays the full plateau.
    const b = designBlend({ accepted: true, r_no_hint: 0.5, regret: 0.075 })!;
    expect(b.plateau).toBe(1);
    expect(b.mean_reward).toBe(0.5);
    expect(b.blend).toBe(0.6 + 0.4 * (0.075 / 0.15));
  });

  it('has no blend for a game that was rejected or not measured', () => {
    expect(designBlend({ accepted: false, r_no_hint: 0.5, regret: 0.1 })).toBeNull();
    expect(designBlend({ accepted: true, r_no_hint: null, regret: 0.1 })).toBeNull();
    expect(designBlend({ accepted: true, r_no_hint: 0.5, regret: null })).toBeNull();
  });
});
