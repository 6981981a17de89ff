import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { openDataDir } from '../../core/memory/cliDb';
import { memoryCatalog } from '../../core/episodes/catalog';
import { EpisodeService } from '../../core/episodes/service';
import { EpisodeStore } from '../../core/episodes/episodeStore';
import { RuntimeService } from '../../core/runtime/service';
import { packageRoot } from '../../core/base/appInfo';
import { tempDir } from '../../tests/helpers/tmp';
import { median, type BenchRow, type BenchSuite } from '../types';

// Four turns an episode (three wrong guesses, then the right one); "wait" never ends it.
const GAME = `class GuessEnv:
    def reset(self, seed=None):
        self.turn = 0
        return "Guess (seed %s)." % seed, {}

    def step(self, action):
        self.turn += 1
        if action == "\\\\boxed{3}":
            return "Correct!", 1.0, True, False, {}
        return "Not %s." % action, 0.0, False, False, {}

    def solution(self):
        return "3"
`;
const ACTIONS = ['\\boxed{0}', '\\boxed{1}', '\\boxed{2}', '\\boxed{3}'];
const EPISODES = 96;
const CONCURRENCY = 8;
const PAIRS = 3;
const SESSIONS = 256;
const HOLD_MS = 30_000;
const STEP_EVERY_MS = 1000;

interface Socket {
  ws: WebSocket;
  ask(msg: unknown): Promise<Record<string, unknown>>;
}

function connect(url: string): Promise<Socket> {
  return new Promise((ok, fail) => {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws`);
    const waiting: ((f: Record<string, unknown>) => void)[] = [];
    ws.on('message', (d) => waiting.shift()?.(JSON.parse(d.toString()) as Record<string, unknown>));
    ws.once('open', () => ok({ ws, ask: (msg) => new Promise((r) => (waiting.push(r), ws.send(JSON.stringify(msg)))) }));
    ws.once('error', fail);
  });
}

function serve(dataDir: string, extra: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [join(packageRoot(), 'bin', 'spade-workbench.mjs'), 'serve-env', '1', '--data-dir', dataDir, '--port', '0', '--json', '--hint', 'off', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((ok, fail) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) ok({ child, url: (JSON.parse(out.slice(0, out.indexOf('\n'))) as { url: string }).url });
    });
    child.once('exit', (code) => fail(new Error(`serve-env exited ${code}: ${err.slice(-2000)}`)));
  });
}

const stop = (child: ChildProcess) => new Promise<void>((done) => (child.exitCode !== null ? done() : (child.once('exit', () => done()), child.kill('SIGTERM'))));

/** `count` episodes by `k` workers, each taking the next seed until none is left. */
async function byWorkers(k: number, count: number, play: (seed: number, worker: number) => Promise<void>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: k }, async (_x, w) => {
    for (let s = next++; s < count; s = next++) await play(s, w);
  }));
  return (performance.now() - t0) / 1000;
}

/**
 * `serve_env.overhead_ratio`: the same episodes (a four-turn game, 96 seeds, 8 at a time) played
 * through `spade-workbench serve-env` (its own process, /ws sessions from here) over played
 * in-process by the workbench's runtime (EpisodeService on native CPython, recorded in SQLite as
 * the server records them). `serve_env.sessions`: /ws sessions held at once for 30 s, each stepping
 * once a second; the figure is how many had every step answered.
 */
export const serveEnvSuite: BenchSuite = {
  prefix: 'serve_env',
  async run(log) {
    const root = packageRoot();
    if (!existsSync(join(root, 'dist', 'node', 'cli.js'))) execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--node'], { stdio: 'inherit' });
    const tmp = tempDir('spade-bench-serve-env-');
    const rows: BenchRow[] = [];
    try {
      const file = join(tmp.dir, 'guess.py');
      writeFileSync(file, GAME);
      const dataDir = join(tmp.dir, 'data');
      execFileSync(process.execPath, [join(root, 'bin', 'spade-workbench.mjs'), 'import', file, '--data-dir', dataDir, '--quiet']);

      // In-process: the workbench's own runtime and episode service.
      const { db } = openDataDir(join(tmp.dir, 'inproc'));
      const catalog = memoryCatalog(db);
      const hash = catalog.add(GAME, 'guess', file);
      const rt = new RuntimeService({ settings: () => ({ stepTimeoutSec: 30, maxTurns: 30, defaultRuntime: 'cpython' }) });
      const svc = new EpisodeService({ store: new EpisodeStore(db), catalog, runtime: rt, defaults: () => ({ maxTurns: 30 }) });
      const inproc = async (seed: number) => {
        const o = await svc.open({ hash, seed, hint: false, runtime: 'cpython', label: 'bench' });
        for (const a of ACTIONS) await svc.act(o.episode.id, a, true);
        await svc.close(o.episode.id);
      };
      let inprocOpen = true;
      const closeInproc = async () => {
        if (!inprocOpen) return;
        inprocOpen = false;
        await svc.closeAll();
        await rt.shutdown();
        db.close();
      };
      const { child, url } = await serve(dataDir, ['--concurrency', String(SESSIONS + 8), '--max-turns', '1000', '--runtime', 'cpython']);
      try {
        const sockets = await Promise.all(Array.from({ length: CONCURRENCY }, () => connect(url)));
        const one = async (seed: number, w: number) => {
          const s = sockets[w]!;
          const r = await s.ask({ type: 'reset', data: { seed } });
          if (r.type !== 'observation') throw new Error(`reset: ${JSON.stringify(r).slice(0, 300)}`);
          for (const a of ACTIONS) {
            const x = await s.ask({ type: 'step', data: { message: a } });
            if (x.type !== 'observation') throw new Error(`step: ${JSON.stringify(x).slice(0, 300)}`);
          }
        };
        await byWorkers(CONCURRENCY, CONCURRENCY, (s) => inproc(10_000 + s));
        await byWorkers(CONCURRENCY, CONCURRENCY, (s, w) => one(10_000 + s, w));
        // Interleaved pairs on a shared machine; the medians are compared.
        const inprocs: number[] = [];
        const served: number[] = [];
        for (let i = 0; i < PAIRS; i++) {
          inprocs.push(await byWorkers(CONCURRENCY, EPISODES, (s) => inproc(s)));
          served.push(await byWorkers(CONCURRENCY, EPISODES, one));
          log(`pair ${i + 1}: ${EPISODES} episodes in-process ${inprocs[i]!.toFixed(2)} s, through serve-env ${served[i]!.toFixed(2)} s`);
        }
        await closeInproc();
        for (const s of sockets) s.ws.close();
        const inprocSec = median(inprocs);
        const serverSec = median(served);
        const ratio = inprocSec / serverSec;
        rows.push({
          id: 'serve_env.overhead_ratio',
          value: Number(ratio.toFixed(3)),
          unit: 'ratio',
          goal: { op: '>=', value: 0.8 },
          note: `episodes/s through serve-env's /ws (${(EPISODES / serverSec).toFixed(1)}) over in-process EpisodeService (${(EPISODES / inprocSec).toFixed(1)}); ${EPISODES} four-turn episodes, ${CONCURRENCY} at a time, native CPython in bubblewrap both ways; medians of ${PAIRS} interleaved pairs`,
        });

        // Sessions held at once: each resets, then steps once a second for HOLD_MS.
        const t0 = performance.now();
        const held = await Promise.all(Array.from({ length: SESSIONS }, async (_x, i) => {
          try {
            const s = await connect(url);
            const r = await s.ask({ type: 'reset', data: { seed: i } });
            if (r.type !== 'observation') return { ok: false, steps: 0, why: JSON.stringify(r).slice(0, 200) };
            return { s, ok: true, steps: 0, why: '' };
          } catch (e) {
            return { ok: false, steps: 0, why: String(e) };
          }
        }));
        log(`${held.filter((h) => h.ok).length}/${SESSIONS} sessions reset in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
        const until = performance.now() + HOLD_MS;
        await Promise.all(held.map(async (h, i) => {
          if (!h.ok || !('s' in h) || !h.s) return;
          await new Promise((r) => setTimeout(r, (i * STEP_EVERY_MS) / SESSIONS));
          while (performance.now() < until) {
            const x = await Promise.race([h.s.ask({ type: 'step', data: { message: 'wait' } }), new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
            if (!x || x.type !== 'observation') {
              h.ok = false;
              h.why = x ? JSON.stringify(x).slice(0, 200) : 'no answer in 10 s';
              return;
            }
            h.steps++;
            await new Promise((r) => setTimeout(r, STEP_EVERY_MS));
          }
        }));
        const ok = held.filter((h) => h.ok);
        const bad = held.find((h) => !h.ok);
        for (const h of held) if ('s' in h && h.s) h.s.ws.close();
        log(`held ${ok.length}/${SESSIONS} sessions for ${HOLD_MS / 1000} s, ${ok.reduce((a, h) => a + h.steps, 0)} steps answered${bad ? `; first failure: ${bad.why}` : ''}`);
        rows.push({
          id: 'serve_env.sessions',
          value: ok.length,
          unit: 'sessions',
          goal: { op: '>=', value: 256 },
          note: `/ws sessions of ${SESSIONS} opened at once, each a forked sandboxed interpreter, held ${HOLD_MS / 1000} s stepping once a second, every step answered`,
        });
      } finally {
        await stop(child);
        await closeInproc();
      }
    } finally {
      tmp.cleanup();
    }
    return rows;
  },
};
