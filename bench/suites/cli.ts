import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { openDatabase } from '../../core/memory/db';
import { memoryCatalog } from '../../core/episodes/catalog';
import { EpisodeService } from '../../core/episodes/service';
import { EpisodeStore } from '../../core/episodes/episodeStore';
import { RuntimeService } from '../../core/runtime/service';
import { ChatClient, SPADE_SAMPLING } from '../../core/models/client';
import { modelPlayer } from '../../core/episodes/agent';
import { packageRoot } from '../../core/base/appInfo';
import { startStandIn } from '../../tests/helpers/standInOpenAi';
import { tempDir } from '../../tests/helpers/tmp';
import { median, type BenchRow, type BenchSuite } from '../types';

/** A served model's turn (the stand-in's delay); the episodes are three turns each. */
const TURN_MS = 200;
const SEEDS = 4;
/** The CLI's default --concurrency. */
const CONCURRENCY = 4;
const PAIRS = 3;

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

function runCli(args: string[]): Promise<{ ms: number; out: string }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const p = spawn(process.execPath, [join(packageRoot(), 'bin', 'spade-workbench.mjs'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('error', reject);
    p.on('exit', (code) => {
      const ms = performance.now() - t0;
      if (code === 0) resolve({ ms, out });
      else reject(new Error(`spade-workbench play exited ${code}: ${err.slice(-2000)}`));
    });
  });
}

/**
 * `play` from the command line (a child process, from its start to its exit) against the same
 * eight episodes played in-process the way the app plays them (its runtime as the app has it after
 * first use, Pyodide, warm), over the same stand-in server, pairs interleaved.
 */
export const cliSuite: BenchSuite = {
  prefix: 'cli',
  async run(log) {
    const root = packageRoot();
    if (!existsSync(join(root, 'dist', 'node', 'cli.js')) || !existsSync(join(root, 'dist', 'node', 'runtime-child.js'))) {
      execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--node'], { stdio: 'inherit' });
    }
    const server = await startStandIn((b) => {
      const k = (b.messages as { role: string }[]).filter((m) => m.role === 'assistant').length;
      return { content: `I say \\boxed{${k + 1}}`, delayMs: TURN_MS };
    });
    const tmp = tempDir('spade-bench-cli-');
    const file = join(tmp.dir, 'guess.py');
    writeFileSync(file, GAME);
    writeFileSync(join(tmp.dir, 'guess_hint.txt'), 'The answer is 3.');
    const db = openDatabase(':memory:');
    const catalog = memoryCatalog(db);
    const rt = new RuntimeService({ settings: () => ({ stepTimeoutSec: 30, maxTurns: 30, defaultRuntime: 'pyodide' }) });
    const svc = new EpisodeService({ store: new EpisodeStore(db), catalog, runtime: rt, defaults: () => ({ maxTurns: 30 }) });
    const hash = catalog.add(GAME, 'guess', file);
    const client = new ChatClient({ ...SPADE_SAMPLING, baseUrl: server.url, model: 'stand-in', apiKey: null, thinking: null, retries: 4, concurrency: CONCURRENCY, stream: false, via: null });
    const player = modelPlayer(client, { thinking: false, policy: { kind: 'llm' } });
    const inProcess = () => svc.regretMany({ hashes: [hash], seeds: SEEDS, seedStart: 0, hintFor: () => 'The answer is 3.', player, concurrency: CONCURRENCY, arms: ['hint', 'nohint'] });
    const cliArgs = ['play', file, '--endpoint', server.url, '--model', 'stand-in', '--seeds', String(SEEDS), '--compare-hint', '--json'];
    const rows: BenchRow[] = [];
    try {
      // The app's runtime has started by the time a person plays (the editor's first syntax check starts it).
      await rt.pool.allReady();
      await svc.regretMany({ hashes: [hash], seeds: 2, seedStart: 1000, hintFor: () => 'h', player, concurrency: CONCURRENCY });
      const cli: number[] = [];
      const inproc: number[] = [];
      let runtime = '?';
      for (let i = 0; i < PAIRS; i++) {
        const t0 = performance.now();
        const r = await inProcess();
        inproc.push(performance.now() - t0);
        if (r.envs[0]!.withHint.returns.length + r.envs[0]!.withoutHint.returns.length !== SEEDS * 2) throw new Error('in-process play did not play eight episodes');
        const c = await runCli(cliArgs);
        const j = JSON.parse(c.out) as { episodes: { return: number; runtime: string }[] };
        if (j.episodes.length !== SEEDS * 2 || j.episodes.some((e) => e.return !== 1)) throw new Error(`the CLI did not win eight episodes: ${c.out.slice(0, 500)}`);
        runtime = j.episodes[0]!.runtime;
        cli.push(c.ms);
        log(`pair ${i + 1}: CLI ${(c.ms / 1000).toFixed(2)} s (${runtime}), in-process ${(inproc[i]! / 1000).toFixed(2)} s`);
      }
      const c = median(cli);
      const p = median(inproc);
      rows.push({
        id: 'cli.play_ratio',
        value: Number((c / p).toFixed(3)),
        unit: 'ratio',
        goal: { op: '<=', value: 1.5 },
        note: `spade-workbench play, 8 episodes (${SEEDS} seeds x hint/no hint, 3 turns of ${TURN_MS} ms, concurrency ${CONCURRENCY}): CLI ${(c / 1000).toFixed(2)} s as a child process (${runtime}) vs ${(p / 1000).toFixed(2)} s in-process on the app's warm Pyodide runtime; medians of ${PAIRS} interleaved pairs`,
      });
    } finally {
      await svc.closeAll();
      await rt.shutdown();
      await server.close();
      db.close();
      tmp.cleanup();
    }
    return rows;
  },
};
