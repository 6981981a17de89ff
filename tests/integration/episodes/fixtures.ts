import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ingest } from '../../../core/memory/repository';
import { sha256 } from '../../../core/memory/parse';
import type { Db } from '../../../core/memory/db';

export const GAMES = join(process.cwd(), 'resources', 'seed-pack', 'games');

/** Adds one seed-pack game (with its hint and stem) to a library; returns its version hash. */
export function addSeedGame(db: Db, stem: string): string {
  const source = readFileSync(join(GAMES, `${stem}.py`), 'utf8');
  const hint = readFileSync(join(GAMES, `${stem}_hint.txt`), 'utf8').trim();
  ingest(db, { source, path: join(GAMES, `${stem}.py`), fileStem: stem, hint });
  return sha256(source);
}

export const GRID = 'game_00000_005_spatial_reasoning';
export const LEAK = 'game_00000_013_mathematical_reasoning';
export const UNWINNABLE = 'game_00000_015_logical_deduction';

/** A game without a turn limit, for long episodes (scrubbing a 1,000-step timeline). */
export const COUNTER_SOURCE = `"""SPADE self-play generated game"""
import random

class CounterEnv:
    def __init__(self, max_turns=100000):
        self.max_turns = max_turns
        self.count = 0
        self.history = []

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.count = random.randint(0, 9)
        self.history = []
        return f"count={self.count}", {}

    def step(self, action):
        self.count += 1
        self.history.append(self.count % 7)
        if len(self.history) > 20:
            self.history.pop(0)
        return f"count={self.count}", 0.0, False, False, {"count": self.count}
`;
