import type { JobSpec } from './types';

/**
 * Why a run's env_memory.json `regret` is SPADE's 0.0 placeholder rather than a measurement, or
 * null when SPADE measures it. SPADE writes `_cached_regret.get(game, 0.0)` into the memory
 * (spade/slime/spade_rollout.py:731), and only the regret_based and blend variants fill that cache
 * (spade/core/orchestrator.py:2480-2492); the learning_potential variant
 * (cmd/ablations/train_learning_potential_30b.sh, `REWARD_VARIANT=learning_potential` in
 * cmd/games/train_spade_30b.sh:154) and Tinker runs (cmd/tinker/*, which keep no memory of their
 * own) never do.
 */
export function regretPlaceholderReason(spec: JobSpec): string | null {
  const words = [...spec.command, ...Object.entries(spec.env).map(([k, v]) => `${k}=${v}`)];
  const text = words.join(' ');
  const recipe = spec.recipe ?? '';
  if (
    /(?:^|\s)REWARD_VARIANT=learning_potential(?:\s|$)/.test(text) ||
    /--spade-env-reward-variant[ =]learning_potential\b/.test(text) ||
    /train_learning_potential_\w+\.sh/.test(text) ||
    /learning[-_]potential/i.test(recipe)
  ) {
    return 'the learning_potential variant: SPADE does not compute regret there';
  }
  if (/cmd\/tinker\/|train_spade_tinker/.test(text) || /tinker/i.test(recipe)) return 'a Tinker run: SPADE does not compute regret for its memory there';
  return null;
}
