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

/** A game whose state outlives its instances: a class-level list and a module global that reset grows. */
export const CLASS_LEAK = `"""SPADE self-play generated game"""
import random
import re

ROUNDS_SEEN = 0


class DigitRecallEnv:
    history = []

    def __init__(self, max_turns=5):
        self.max_turns = max_turns
        self.target = None
        self.turn = 0

    def reset(self, seed=None):
        global ROUNDS_SEEN
        if seed is not None:
            random.seed(seed)
        self.target = random.randint(0, 9)
        self.turn = 0
        self.history.append(self.target)
        ROUNDS_SEEN += 1
        return f"Remember the digit {self.target}, then answer it as \\\\boxed{{d}}.", {}

    def step(self, action):
        self.turn += 1
        m = re.search(r"\\\\boxed\\{(\\d)\\}", action)
        won = bool(m) and int(m.group(1)) == self.target
        return ("Correct." if won else "Wrong."), (1.0 if won else 0.0), True, False, {}
`;

/** Adds a source to a library; returns its version hash. */
export function addSource(db: Db, source: string, name = 'game.py'): string {
  ingest(db, { source, path: name });
  return sha256(source);
}
