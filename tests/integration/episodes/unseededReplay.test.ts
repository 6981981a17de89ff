/**
 * SPADE resets its unhinted plays with no seed (orchestrator.py:335). The workbench plays them so
 * (the game's reset gets seed=None) and keeps them replayable: the interpreter's random starts from
 * a number drawn and kept with the episode (meta.preseed), which a replay starts from again. A game
 * that draws at an unseeded reset replays without a divergence, in both runtimes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Services } from '../../../core/services/services';
import { ingest } from '../../../core/memory/repository';
import { sha256 } from '../../../core/memory/parse';
import { tempDir } from '../../helpers/tmp';

const SOURCE = `import random
class DrawEnv:
    def __init__(self):
        self.secret = 0
    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.secret = random.randint(1, 10**9)
        return f"seeded={seed is not None} secret {self.secret}", {}
    def step(self, action):
        return f"it was {self.secret}", 0.0, True, False, {}
`;

const tmp = tempDir('spade-unseeded-');
let s: Services;
const hash = sha256(SOURCE);
beforeAll(() => {
  s = new Services({ dataDir: tmp.dir, shell: 'in-process' });
  ingest(s.db, { source: SOURCE, path: 'draw_env.py', fileStem: 'draw_env', hint: 'any' });
});
afterAll(async () => {
  await s.close();
  tmp.cleanup();
});

describe('unseeded resets', () => {
  for (const runtime of ['pyodide', 'cpython'] as const) {
    it(`${runtime}: reset with no seed, recorded with its preseed, replayed with no divergence`, async () => {
      const r = await s.episodes.regretMany({ hashes: [hash], seeds: 1, seedStart: 0, estimator: 'spade', spade: { hintPlays: 1, noHintPlays: 3 }, policy: { kind: 'script', actions: ['x'], extract: false }, runtime, concurrency: 1 });
      const plain = r.episodes.filter((x) => !x.hint);
      expect(plain).toHaveLength(3);
      const secrets = new Set<string>();
      for (const p of plain) {
        const got = s.episodes.get(p.episodeId);
        expect(got.episode.seed).toBeNull();
        expect(got.episode.meta).toMatchObject({ unseeded: true, preseed: expect.any(Number) });
        const obs = String(got.steps[0]!.spade?.observation ?? got.steps[0]!.observation);
        // The game saw no seed, and drew.
        expect(obs).toMatch(/^seeded=False secret \d+/);
        secrets.add(obs);
        expect((await s.episodes.replay(p.episodeId)).divergence).toBeNull();
      }
      // Three plays, three draws (a fresh number each play, as a trainer's process would give).
      expect(secrets.size).toBe(3);
    }, 240_000);
  }
});
