/**
 * Which regret a measurement is. Two estimators, each with its own id, stored with every number:
 *
 * - `spade` (the default): SPADE's trainer's. Hinted play i of a game resets with
 *   `hash(game_file + str(i)) % 2**31` (spade/core/orchestrator.py:1951-1974; spadeSeeds.ts), 16
 *   of them in the recipes (cmd/games/train_spade_8b.sh:116, cmd/tool_use/_train_spade_blend.sh:200);
 *   a hinted play that fails to load or breaks counts 0.0 (orchestrator.py:1825-1832, averaged at
 *   :1980). The unhinted plays are the actor's own rollouts, reset with no seed (orchestrator.py:335),
 *   ceil(global batch / games) of them (:2382): 192 / 24 = 8 in the 8B games recipe
 *   (train_spade_8b.sh:85, :104); a failed one is dropped (:1614-1623) and a game none of whose
 *   unhinted plays survived reads R(no hint) = 0.0 (:2046-2047). Regret = R(hint) - R(no hint),
 *   0.0 when hint generation failed (:2042-2043). In the 8B recipe only the unhinted arm thinks:
 *   its actor plays with `--spade-actor-enable-thinking` (train_spade_8b.sh:140-142, taken at
 *   orchestrator.py:367-369) while the hinted plays go through `_play_game_with_hint_async`, whose
 *   request carries no per-role template override, under the run's global
 *   `enable_thinking: false` (train_spade_8b.sh:88).
 * - `paired` (an option): the workbench's. The same N seeds on both arms, a seed counted only when
 *   both arms finished it, failures dropped from both.
 */
import { spadeHintSeeds, type PyHashAlgo } from './spadeSeeds';

export const REGRET_ESTIMATORS = ['spade', 'paired'] as const;
export type RegretEstimator = (typeof REGRET_ESTIMATORS)[number];

/** What a person reads next to a regret. */
export const ESTIMATOR_LABEL: Record<RegretEstimator, string> = {
  spade: "SPADE's regret",
  paired: 'paired-seed regret (workbench)',
};

export const ESTIMATOR_HELP: Record<RegretEstimator, string> = {
  spade: "SPADE's estimator: 16 hinted plays seeded from the game's path, 8 unhinted plays reset with no seed; a failed hinted play counts 0.0, a failed unhinted one is dropped",
  paired: 'paired seeds: the same seeds with and without the hint, a failed episode dropped from both arms',
};

export function isEstimator(v: unknown): v is RegretEstimator {
  return typeof v === 'string' && (REGRET_ESTIMATORS as readonly string[]).includes(v);
}

/** Parses `--estimator`; undefined is SPADE's. */
export function parseEstimator(v: string | undefined): RegretEstimator {
  if (v === undefined) return 'spade';
  if (!isEstimator(v)) throw new Error(`--estimator must be spade or paired, got ${v}`);
  return v;
}

export interface SpadeEstimatorOptions {
  hintPlays: number;
  noHintPlays: number;
  /** PYTHONHASHSEED the hinted seeds are derived under (SPADE's runs draw a random one per process). */
  hashSeed: number;
  hashAlgo: PyHashAlgo;
  /**
   * Thinking of a served model per arm: null keeps the run's setting on both. SPADE's 8B games
   * recipe: the unhinted arm thinks, the hinted one does not ({hint: false, nohint: true}).
   */
  thinking: { hint: boolean; nohint: boolean } | null;
}

export const SPADE_ESTIMATOR_DEFAULTS: SpadeEstimatorOptions = { hintPlays: 16, noHintPlays: 8, hashSeed: 0, hashAlgo: 'siphash13', thinking: null };

/** SPADE's estimator's settings, its defaults filled in (an undefined field keeps the default). */
export function spadeOptions(o: Partial<SpadeEstimatorOptions> | undefined): SpadeEstimatorOptions {
  const given = Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined)) as Partial<SpadeEstimatorOptions>;
  return { ...SPADE_ESTIMATOR_DEFAULTS, ...given };
}

/** The 8B games recipe's arms: only the unhinted one thinks (see the header). */
export const SPADE_8B_THINKING = { hint: false, nohint: true } as const;

/**
 * The path SPADE would hash for a library game. SPADE hashes the game file's path as its trainer
 * was given it (its games directory, which the workbench does not have); the workbench uses the
 * file name the game was imported from (`STEM.py`), else its name, else the version hash, and
 * records the path with the run.
 */
export function spadeGamePath(env: { fileStem?: string | null | undefined; name: string | null } | null, hash: string): string {
  const stem = (env?.fileStem ?? '').trim() || (env?.name ?? '').trim() || hash.slice(0, 12);
  return stem.endsWith('.py') ? stem : `${stem}.py`;
}

/** One episode to play: an unseeded unhinted play has `seed: null` and its place `slot`. */
export interface EstimatorJob {
  hash: string;
  hint: boolean;
  seed: number | null;
  slot?: number;
}

/** SPADE's episodes of one game: the hinted plays (when it has a hint) then the unseeded unhinted ones. */
export function spadeJobs(hash: string, gamePath: string, hasHint: boolean, o: SpadeEstimatorOptions): EstimatorJob[] {
  const hinted = hasHint ? spadeHintSeeds(gamePath, o.hintPlays, o.hashSeed, o.hashAlgo).map((seed, i): EstimatorJob => ({ hash, hint: true, seed, slot: i })) : [];
  const plain = Array.from({ length: o.noHintPlays }, (_, k): EstimatorJob => ({ hash, hint: false, seed: null, slot: k }));
  return [...hinted, ...plain];
}

/** A played episode as the estimators see it. */
export interface EstimatorRow {
  hint: boolean;
  ret: number;
  /** No return (the policy or the harness failed, SPADE refused an unhinted load). */
  failed: boolean;
}

const mean = (xs: number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/**
 * SPADE's aggregation of one game's plays: every hinted play counts, a failed one as 0.0; failed
 * unhinted plays are dropped; an arm with nothing reads 0.0; regret 0.0 when hint generation failed.
 */
export function spadeAggregate(rows: readonly EstimatorRow[], hintFailed: boolean): { hintReturns: number[]; noHintReturns: number[]; rHint: number; rNoHint: number; regret: number; droppedNoHint: number; zeroedHint: number } {
  const hinted = rows.filter((r) => r.hint);
  const hintReturns = hinted.map((r) => (r.failed ? 0 : r.ret));
  const noHintReturns = rows.filter((r) => !r.hint && !r.failed).map((r) => r.ret);
  const rNoHint = mean(noHintReturns);
  const rHint = hintFailed ? 0 : mean(hintReturns);
  return { hintReturns, noHintReturns, rHint, rNoHint, regret: hintFailed ? 0 : rHint - rNoHint, droppedNoHint: rows.filter((r) => !r.hint && r.failed).length, zeroedHint: hinted.filter((r) => r.failed).length };
}
