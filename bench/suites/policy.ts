import { openDatabase } from '../../core/memory/db';
import { memoryCatalog } from '../../core/episodes/catalog';
import { EpisodeService } from '../../core/episodes/service';
import { EpisodeStore } from '../../core/episodes/episodeStore';
import { RuntimeService } from '../../core/runtime/service';
import { ChatClient } from '../../core/models/client';
import { modelPlayer } from '../../core/episodes/agent';
import { startStandIn } from '../../tests/helpers/standInOpenAi';
import type { BenchRow, BenchSuite } from '../types';

const TURN_MS = 200;
const CONCURRENCY = 64;
const TURNS = 3;

// Three turns an episode: two wrong guesses, then the right one (the stand-in answers by turn).
const GAME = `class GuessEnv:
    def __init__(self, max_turns=30):
        self.max_turns = max_turns

    def reset(self, seed=None):
        self.turn = 0
        return f"Guess (seed {seed}).", {}

    def step(self, action):
        self.turn += 1
        if action == "\\\\boxed{3}":
            return "Correct!", 1.0, True, False, {}
        return f"Not {action}.", 0.0, False, False, {}
`;

export const policySuite: BenchSuite = {
  prefix: 'policy',
  async run(log) {
    const server = await startStandIn((b) => {
      const k = (b.messages as { role: string }[]).filter((m) => m.role === 'assistant').length;
      return { content: `I say \\boxed{${k + 1}}`, delayMs: TURN_MS };
    });
    const db = openDatabase(':memory:');
    const catalog = memoryCatalog(db);
    const rt = new RuntimeService({ settings: () => ({ stepTimeoutSec: 30, maxTurns: 30, defaultRuntime: 'pyodide' }) });
    const svc = new EpisodeService({ store: new EpisodeStore(db), catalog, runtime: rt, defaults: () => ({ maxTurns: 30 }) });
    const hash = catalog.add(GAME, 'guess', 'bench/guess.py');
    const client = new ChatClient({ baseUrl: server.url, model: 'stand-in', apiKey: null, temperature: 1, topP: 0.95, topK: 20, maxTokens: 64, thinking: null, turnTimeoutMs: 30_000, retries: 2, concurrency: CONCURRENCY, stream: false });
    const player = modelPlayer(client, { thinking: false, policy: { kind: 'llm' } });
    const rows: BenchRow[] = [];
    try {
      // Warm the interpreters and the connection pool once.
      await svc.regretMany({ hashes: [hash], seeds: CONCURRENCY / 2, seedStart: 10_000, hintFor: () => 'h', player, concurrency: CONCURRENCY, runtime: 'pyodide' });
      const seeds = 128;
      const episodes = seeds * 2;
      const t0 = performance.now();
      const r = await svc.regretMany({ hashes: [hash], seeds, seedStart: 0, hintFor: () => 'h', player, concurrency: CONCURRENCY, runtime: 'pyodide' });
      const sec = (performance.now() - t0) / 1000;
      const got = r.envs[0]!.withHint.returns.length + r.envs[0]!.withoutHint.returns.length;
      if (got !== episodes || r.envs[0]!.withHint.mean !== 1) throw new Error(`the bench run went wrong: ${got} episodes, hinted mean ${r.envs[0]!.withHint.mean}`);
      const rate = episodes / sec;
      // Latency-bound ideal: K episodes in flight, each TURNS model turns of TURN_MS.
      const ideal = CONCURRENCY / ((TURNS * TURN_MS) / 1000);
      log(`regret over a served model: ${episodes} episodes (${TURNS} turns each) in ${sec.toFixed(2)} s = ${rate.toFixed(1)} episodes/s; ideal ${ideal.toFixed(1)}/s`);
      rows.push({
        id: 'policy.regret_throughput_ratio',
        value: Number((rate / ideal).toFixed(3)),
        unit: 'ratio',
        goal: { op: '>=', value: 0.9 },
        note: `${rate.toFixed(1)} episodes/s over ${episodes} episodes against a stand-in OpenAI server at ${TURN_MS} ms a turn, concurrency ${CONCURRENCY}, ${TURNS} turns an episode; ideal ${ideal.toFixed(1)}/s; Pyodide`,
      });
    } finally {
      await svc.closeAll();
      await rt.shutdown();
      await server.close();
      db.close();
    }
    return rows;
  },
};
