/**
 * The regret estimator's command-line options, shared by `regret` and `design`: SPADE's estimator
 * by default (its counts, seeds from the game's path, unseeded unhinted plays, a failed hinted play
 * counted 0.0; core/episodes/estimator.ts), `--estimator paired` for the workbench's paired seeds.
 */
import { UsageError } from '../command';
import { isEstimator, SPADE_8B_THINKING, type RegretEstimator, type SpadeEstimatorOptions } from '../../episodes/estimator';

export const ESTIMATOR_OPTIONS = {
  estimator: { type: 'string' },
  'hint-plays': { type: 'string' },
  'nohint-plays': { type: 'string' },
  'hash-seed': { type: 'string' },
  'arm-thinking': { type: 'string' },
} as const;

type Values = { estimator?: string | undefined; 'hint-plays'?: string | undefined; 'nohint-plays'?: string | undefined; 'hash-seed'?: string | undefined; 'arm-thinking'?: string | undefined };

function int(v: string | undefined, name: string, lo: number, hi: number): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < lo || n > hi) throw new UsageError(`--${name} must be an integer from ${lo} to ${hi}, got ${v}`);
  return n;
}

/** `--estimator`, and SPADE's settings where it is SPADE's (refused with `paired`, where they mean nothing). */
export function cliEstimator(values: Values): { estimator: RegretEstimator; spade: Partial<SpadeEstimatorOptions> } {
  const estimator = values.estimator ?? 'spade';
  if (!isEstimator(estimator)) throw new UsageError(`--estimator must be spade (SPADE's regret, the default) or paired (the same seeds on both arms), got ${estimator}`);
  const spadeOnly = (['hint-plays', 'nohint-plays', 'hash-seed', 'arm-thinking'] as const).filter((k) => values[k] !== undefined);
  if (estimator === 'paired' && spadeOnly.length) throw new UsageError(`--${spadeOnly[0]} sets SPADE's estimator; --estimator paired plays --seeds N on both arms`);
  const at = values['arm-thinking'];
  if (at !== undefined && at !== 'both' && at !== 'spade-8b') throw new UsageError(`--arm-thinking must be both (each arm as --thinking says) or spade-8b (only the unhinted arm thinks, as SPADE's 8B recipe), got ${at}`);
  const hintPlays = int(values['hint-plays'], 'hint-plays', 1, 1000);
  const noHintPlays = int(values['nohint-plays'], 'nohint-plays', 1, 1000);
  const hashSeed = int(values['hash-seed'], 'hash-seed', 0, 4294967295);
  return {
    estimator,
    spade: {
      ...(hintPlays !== undefined ? { hintPlays } : {}),
      ...(noHintPlays !== undefined ? { noHintPlays } : {}),
      ...(hashSeed !== undefined ? { hashSeed } : {}),
      ...(at === 'spade-8b' ? { thinking: { ...SPADE_8B_THINKING } } : {}),
    },
  };
}
