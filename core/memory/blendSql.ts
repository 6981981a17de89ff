/**
 * SPADE's designer blend (core/api/spadeBlend.ts) as an SQL expression, so the library sorts by it
 * in the database (the list is paged; sorting in JavaScript would need every row). The displayed
 * number is computed by core/api/blendParts.ts from the same stored numbers; the expression makes
 * the same IEEE operations in the same order (spadePlateau, then regretTerm + plateauTerm), and
 * tests/unit/blendSql.test.ts checks the two agree to the last bit on SPADE's fixture rows.
 *
 * Null when either number is null (regret not measured: no blend, sorted last, never a 0).
 */
import type { Db } from './db';
import { SPADE_BLEND_DEFAULTS, type SpadeBlendParams } from '../api/spadeBlend';

/** A number as an SQL literal that reads back as the same double (JavaScript's shortest round trip). */
function lit(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`SPADE blend: ${String(n)} is not a finite number`); // not-user-facing: constants
  const s = String(n);
  return /[.eE]/.test(s) ? s : `${s}.0`;
}

export function blendSql(mean: string, regret: string, p: SpadeBlendParams = SPADE_BLEND_DEFAULTS): string {
  const [lo, hi, ramp] = [lit(p.plateauLo), lit(p.plateauHi), lit(p.plateauRamp)];
  // rewards.py:16-26 (spadePlateau): the same comparisons, max(0.0, 1.0 - d / ramp) on either side.
  const plateau = `(CASE WHEN ${mean} < ${lo} THEN max(0.0, 1.0 - (${lo} - ${mean}) / ${ramp}) WHEN ${mean} > ${hi} THEN max(0.0, 1.0 - (${mean} - ${hi}) / ${ramp}) ELSE 1.0 END)`;
  const norm = p.regretFloor ? `min(1.0, max(0.0, ${regret} / ${lit(p.regretScale)}))` : `(${regret} / ${lit(p.regretScale)})`;
  return `(CASE WHEN ${mean} IS NULL OR ${regret} IS NULL THEN NULL ELSE ${lit(p.regretWeight)} * ${norm} + ${lit(p.plateauWeight)} * ${plateau} END)`;
}

const estimatorColumn = new WeakMap<Db, boolean>();
/**
 * Whether model_run_envs says which estimator measured each regret (a later migration adds the
 * column); read once per open database, since migrations run only when it opens.
 */
export function hasEstimator(db: Db): boolean {
  let known = estimatorColumn.get(db);
  if (known === undefined) {
    known = (db.pragma('table_info(model_run_envs)') as { name: string }[]).some((c) => c.name === 'estimator');
    estimatorColumn.set(db, known);
  }
  return known;
}
