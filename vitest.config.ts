import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * Starts the longest test files first (longest-processing-time scheduling). With two workers, a
 * long file that happens to start last keeps one worker busy while the other sits idle; vitest's
 * own order helps only where its results cache exists, which a fresh CI machine never has (there it
 * falls back to file size, and a short file can be slow). Durations come from a committed table,
 * tests/fileSeconds.json; files it does not name follow in vitest's own order.
 */
const fileSeconds = JSON.parse(readFileSync(join(import.meta.dirname, 'tests', 'fileSeconds.json'), 'utf8')) as Record<string, unknown>;
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const vitestOrder = await super.sort(files);
    const rank = new Map(vitestOrder.map((f, i) => [f, i]));
    const seconds = (f: TestSpecification): number => {
      const s = fileSeconds[relative(import.meta.dirname, f.moduleId).split('\\').join('/')];
      return typeof s === 'number' ? s : 0;
    };
    return [...vitestOrder].sort((a, b) => seconds(b) - seconds(a) || rank.get(a)! - rank.get(b)!);
  }
}

// Three projects: fast unit tests, integration tests against real SQLite/Pyodide/CPython/servers,
// and e2e tests driving Debian's Chromium against the web host. Timing is never asserted here;
// speed lives in `npm run bench`.
export default defineConfig({
  test: {
    // vitest's default is one worker less than the cores, a single worker on the 2-core CI machine;
    // integration files spend much of their time waiting on child processes and servers, so two
    // share the cores well. The longest files start first so that none is left running alone at the end.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['tests/unit/**/*.test.ts'],
          environment: 'node',
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['tests/integration/**/*.test.ts'],
          environment: 'node',
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['tests/e2e/**/*.test.ts'],
          environment: 'node',
          testTimeout: 180_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
