/**
 * Memory seeds for the designer, drawn as SPADE draws them (docs/spade-formats.md, section 8 item 8):
 * positives are games of the same skill whose win rate lies in [0.15, 0.85] (inclusive), the pool is
 * the top max(3n, 10) by regret (stable: ties keep memory order), and n of them are taken at random;
 * one negative (win rate above 0.9 or below 0.1) is taken at random and shown by name only. SPADE
 * has no fallback when too few match, and neither do we.
 *
 * What the workbench adds, as options: pinned seeds are always offered (first, before any drawn one)
 * and banned ones never; and the draw uses a seeded generator, so the prompt a preview shows is the
 * prompt the attempt sends, and a round can be repeated.
 */
import { seededRandom } from '../episodes/policy';

export interface MemoryRecord {
  /** Library environment id, when the record is in the library. */
  envId: number | null;
  /** The name SPADE shows for a negative: the game file's stem. */
  name: string;
  skill: string | null;
  winRate: number | null;
  regret: number | null;
  /** The first 2,000 characters of the program, as SPADE keeps them. */
  snippet: string;
  /** Where the numbers came from: the workbench measured them (which model) or a training run recorded them. */
  source: string;
}

export interface SeedDraw {
  positives: MemoryRecord[];
  negatives: MemoryRecord[];
}

export const POSITIVE_BAND = { min: 0.15, max: 0.85 } as const;
export const SNIPPET_CHARS = 2000;

/** k items of xs drawn without replacement, in draw order (as Python's random.sample returns them). */
function sample<T>(xs: readonly T[], k: number, rnd: () => number): T[] {
  const pool = [...xs];
  const out: T[] = [];
  for (let i = 0; i < Math.min(k, pool.length); i++) {
    const j = i + Math.floor(rnd() * (pool.length - i));
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
    out.push(pool[i]!);
  }
  return out;
}

const isNum = (x: number | null): x is number => typeof x === 'number' && Number.isFinite(x);

export function drawSeeds(
  records: readonly MemoryRecord[],
  opts: { skill: string; positives?: number; negatives?: number; pins?: readonly number[]; bans?: readonly number[]; seed: number },
): SeedDraw {
  const n = opts.positives ?? 2;
  const rnd = seededRandom(opts.seed);
  const banned = new Set(opts.bans ?? []);
  const pinned = new Set(opts.pins ?? []);
  const allowed = records.filter((r) => r.envId === null || !banned.has(r.envId));
  const pins = allowed.filter((r) => r.envId !== null && pinned.has(r.envId));
  const sameSkill = allowed.filter((r) => r.skill === opts.skill && !(r.envId !== null && pinned.has(r.envId)));
  const band = sameSkill.filter((r) => isNum(r.winRate) && r.winRate >= POSITIVE_BAND.min && r.winRate <= POSITIVE_BAND.max && isNum(r.regret));
  const byRegret = band.map((r, i) => ({ r, i })).sort((a, b) => b.r.regret! - a.r.regret! || a.i - b.i).map((x) => x.r);
  const pool = byRegret.slice(0, Math.max(3 * n, 10));
  const drawn = sample(pool, Math.max(0, n - pins.length), rnd);
  const bad = sameSkill.filter((r) => isNum(r.winRate) && (r.winRate > 0.9 || r.winRate < 0.1));
  return { positives: [...pins, ...drawn], negatives: sample(bad, opts.negatives ?? 1, rnd) };
}

const two = (x: number | null) => (isNum(x) ? x.toFixed(2) : 'not measured');

/**
 * The memory appendix SPADE adds after the designer prompt: positives with their numbers and code,
 * negatives by name with "too easy" (win rate above 0.9) or "too hard". Empty when there are none.
 */
export function formatSeeds(d: SeedDraw): string {
  const parts: string[] = [];
  if (d.positives.length) {
    const blocks = d.positives.map(
      (r, i) => `### Example ${i + 1} (skill: ${r.skill ?? 'unknown'}, win_rate: ${two(r.winRate)}, regret: ${two(r.regret)})\n\`\`\`python\n${r.snippet.slice(0, SNIPPET_CHARS)}\n\`\`\``,
    );
    parts.push(
      `<REFERENCE_ENVIRONMENTS>\nThese environments from memory were well calibrated for the agent: borrow their structure and depth, but design a different game.\n\n${blocks.join('\n\n')}\n</REFERENCE_ENVIRONMENTS>`,
    );
  }
  if (d.negatives.length) {
    const lines = d.negatives.map((r) => `- ${isNum(r.winRate) && r.winRate > 0.9 ? 'too easy' : 'too hard'} (win_rate=${two(r.winRate)}): class ${r.name}`);
    parts.push(`Avoid generating environments like:\n${lines.join('\n')}`);
  }
  return parts.join('\n\n');
}
