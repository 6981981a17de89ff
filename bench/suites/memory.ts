import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../../core/memory/db';
import { importPaths } from '../../core/memory/importer';
import { ingest, search } from '../../core/memory/repository';
import { COGNITIVE_SKILLS, skillSlug } from '../../core/memory/parse';
import { tempDir } from '../../tests/helpers/tmp';
import { median, percentile, type BenchRow, type BenchSuite } from '../types';

const WORDS = (
  'grid maze token cipher ledger orbit prism lattice harbor signal beacon puzzle sequence parity knight bishop tower ' +
  'river bridge market auction vault garden spiral mirror switch lamp clock wheel gear circuit relay vector matrix ' +
  'prime factor modulo digit balance scale weight coin dice card deck shuffle rune glyph oracle riddle'
).split(' ');

/** A source shaped like SPADE's generated games (~3 KB: docstring, state, reset, step, solution). */
export function generatedGame(i: number): string {
  const w = (k: number) => WORDS[(i * 7 + k * 13) % WORDS.length]!;
  const cls = `${w(0)[0]!.toUpperCase()}${w(0).slice(1)}${w(1)[0]!.toUpperCase()}${w(1).slice(1)}${i}Env`;
  return `"""SPADE self-play generated game"""
import random
import re


class ${cls}:
    """A ${w(2)} ${w(3)} game: the agent must find the hidden ${w(4)} by reasoning about ${w(5)} clues.
    Each turn the agent proposes a ${w(6)} and receives feedback about the ${w(7)}."""

    def __init__(self, max_turns=${10 + (i % 20)}):
        self.max_turns = max_turns
        self.turn = 0
        self.secret = None
        self.history = []

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn = 0
        self.history = []
        self.secret = [random.randint(0, ${5 + (i % 9)}) for _ in range(${3 + (i % 4)})]
        clue = sum(self.secret) % ${7 + (i % 5)}
        obs = (
            "You face a ${w(8)} of ${3 + (i % 4)} cells holding numbers 0-${5 + (i % 9)}. "
            f"The ${w(9)} checksum of the cells is {clue}. Answer with the cells separated by commas, "
            "e.g. \\\\boxed{1,2,3}."
        )
        return obs, {"checksum": clue}

    def solution(self):
        return ",".join(str(x) for x in self.secret)

    def _parse(self, action):
        m = re.search(r"\\\\boxed\\{([^}]*)\\}", action)
        if not m:
            return None
        try:
            return [int(x) for x in m.group(1).split(",")]
        except ValueError:
            return []

    def step(self, action):
        self.turn += 1
        guess = self._parse(action)
        if guess is None:
            return "Please answer inside \\\\boxed{}.", 0.0, False, False, {}
        self.history.append(guess)
        if guess == self.secret:
            return "Solved: the ${w(10)} opens.", 1.0, True, False, {}
        if self.turn >= self.max_turns:
            return f"Out of turns. The answer was {self.solution()}.", 0.0, False, True, {}
        right = sum(1 for a, b in zip(guess, self.secret) if a == b)
        return f"{right} cell(s) are right. Try again.", 0.0, False, False, {"right": right}
`;
}

export const memorySuite: BenchSuite = {
  prefix: 'memory',
  async run(log) {
    const rows: BenchRow[] = [];
    const tmp = tempDir('spade-bench-memory-');
    try {
      const src = join(tmp.dir, 'games');
      mkdirSync(src);
      const N = 10_000;
      for (let i = 0; i < N; i++) {
        const skill = COGNITIVE_SKILLS[i % COGNITIVE_SKILLS.length]!;
        const stem = `game_${String(Math.floor(i / 100)).padStart(5, '0')}_${String(i % 100).padStart(3, '0')}_${skillSlug(skill)}`;
        writeFileSync(join(src, `${stem}.py`), generatedGame(i));
        if (i % 2 === 0) writeFileSync(join(src, `${stem}_hint.txt`), `Use the ${WORDS[i % WORDS.length]} checksum to prune guesses; fix one cell at a time.`);
      }
      const dbPath = join(tmp.dir, 'data', 'workbench.sqlite');
      const db = openDatabase(dbPath);
      const t0 = performance.now();
      const s = await importPaths(db, [src]);
      const importS = (performance.now() - t0) / 1000;
      log(`imported ${s.imported} of ${N} files in ${importS.toFixed(2)} s (${s.skipped.length} skipped)`);
      rows.push({ id: 'memory.import_10k_s', value: importS, unit: 's', goal: { op: '<=', value: 5 }, note: `${s.imported} generated-style games + hints from files, one process` });

      // Grow to 100,000 with the same generator, straight through ingest (files would only add disk time).
      const TOTAL = 100_000;
      const now = new Date().toISOString();
      for (let start = N; start < TOTAL; start += 2000) {
        db.transaction(() => {
          for (let i = start; i < Math.min(TOTAL, start + 2000); i++) {
            ingest(
              db,
              {
                source: generatedGame(i),
                path: `synthetic/${i}.py`,
                skill: COGNITIVE_SKILLS[i % COGNITIVE_SKILLS.length]!,
                rolloutStep: Math.floor(i / 100),
                stats: { winRate: (i % 100) / 100, regret: ((i * 37) % 100) / 100 },
                ...(i % 2 ? { hint: `Fix one ${WORDS[i % WORDS.length]} at a time.` } : {}),
              },
              now,
            );
          }
        })();
      }
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.exec('ANALYZE');
      log(`library grown to ${TOTAL}`);

      const queries = ['maze', 'cipher ledger', 'knight', 'prism', 'checksum', 'boxed', 'orbit beacon', 'rune', 'Vault', 'spiral mirror', 'parity', 'tower', 'oracle riddle', 'gear', 'relay', 'matrix', 'dice', 'coin', 'PrismLattice', 'harbor'];
      const prefixes = queries.flatMap((q) => [q.slice(0, 3), q]);
      for (const q of prefixes) search(db, { query: q, limit: 100 });
      const times: number[] = [];
      for (let rep = 0; rep < 5; rep++) {
        for (const q of prefixes) {
          const t = performance.now();
          search(db, { query: q, limit: 100 });
          times.push(performance.now() - t);
        }
      }
      rows.push({
        id: 'memory.search_p95_ms',
        value: percentile(times, 95),
        unit: 'ms',
        goal: { op: '<=', value: 20 },
        note: `${times.length} full-text searches (first page of 100 + total) at ${TOTAL} envs, median ${median(times).toFixed(1)} ms`,
      });

      const listTimes: number[] = [];
      const sorts = [undefined, { field: 'name', dir: 'asc' }, { field: 'regret', dir: 'desc' }, { field: 'updated', dir: 'desc' }] as const;
      for (let rep = 0; rep < 10; rep++) {
        for (const sort of sorts) {
          const t = performance.now();
          search(db, { query: '', limit: 100, ...(sort ? { sort: { ...sort } } : {}) });
          listTimes.push(performance.now() - t);
        }
      }
      rows.push({
        id: 'memory.list_first_page_ms',
        value: percentile(listTimes, 95),
        unit: 'ms',
        goal: { op: '<=', value: 100 },
        note: `p95 of ${listTimes.length} first pages (100 rows + total) over 4 sort orders at ${TOTAL} envs`,
      });
      db.close();
      const bytes = statSync(dbPath).size;
      rows.push({ id: 'memory.bytes_per_env', value: bytes / TOTAL, unit: 'B/env', note: `${(bytes / 1024 / 1024).toFixed(0)} MiB for ${TOTAL} envs of ~3 KB source each, FTS included` });
    } finally {
      tmp.cleanup();
    }
    return rows;
  },
};
