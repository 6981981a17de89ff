import { availableParallelism } from 'node:os';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ChildProcess } from 'node:child_process';
import type { CliIO, Command } from '../command';
import { runtimeArg, UsageError } from '../command';
import { commandInfo } from '../catalog';
import { RuntimeService } from '../../runtime/service';
import { appVersion } from '../../base/appInfo';
import { openDataDir } from '../../memory/cliDb';
import { memoryCatalog } from '../../episodes/catalog';
import { importSeedPackIfDue } from '../../memory/seedPack';
import { EpisodeService } from '../../episodes/service';
import { EpisodeStore } from '../../episodes/episodeStore';
import { resolveEnvs, taskList } from '../../openenv/tasks';
import { startOpenEnvServer } from '../../openenv/server';
import type { Served } from '../../openenv/episode';
import { resolveLocalModel } from '../../models/localModel';
import { findOrCreateTrainVenv } from '../../train/venv';
import { modelArgs, runPython, trainerArgv, type TrainSettings } from '../../train/run';
import { evaluateCheckpoint, notAnAdapter } from '../../train/evaluate';

function num(v: string | undefined, name: string, dflt: number, ok: (n: number) => boolean): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || !ok(n)) throw new UsageError(`${name} is out of range: ${v}`);
  return n;
}
const int = (lo: number, hi: number) => (n: number) => Number.isInteger(n) && n >= lo && n <= hi;

/** `spade-workbench train --selection QUERY`: GRPO with LoRA over serve-env, then before/after as two model runs. */
export const trainCommand: Command = {
  ...commandInfo('train'),
  async run(argv, io: CliIO) {
    const { values } = parseArgs({
      args: argv,
      options: {
        selection: { type: 'string' }, model: { type: 'string' }, steps: { type: 'string' }, 'group-size': { type: 'string' },
        'prompts-per-step': { type: 'string' }, 'lora-rank': { type: 'string' }, lr: { type: 'string' }, 'max-turns': { type: 'string' },
        'max-new-tokens': { type: 'string' }, 'hint-share': { type: 'string' }, 'boxed-reward': { type: 'string' }, 'train-seeds': { type: 'string' },
        'eval-seeds': { type: 'string' }, out: { type: 'string' }, 'no-eval': { type: 'boolean' }, runtime: { type: 'string' }, 'data-dir': { type: 'string' },
        'train-venv': { type: 'string' }, json: { type: 'boolean' }, evaluate: { type: 'string' }, 'save-every': { type: 'string' },
      },
      strict: true,
    });
    if (values.selection === undefined) throw new UsageError('Give --selection QUERY (the environments to train on)');
    const runtime = runtimeArg(values.runtime, 'auto');
    const m = modelArgs(values.model ?? resolveLocalModel('SmolLM2-135M-Instruct'));
    const settings: Omit<TrainSettings, 'out'> = {
      selection: values.selection, ...m,
      steps: num(values.steps, '--steps', 4, int(1, 100_000)),
      groupSize: num(values['group-size'], '--group-size', 2, int(2, 64)),
      promptsPerStep: num(values['prompts-per-step'], '--prompts-per-step', 2, int(1, 256)),
      loraRank: num(values['lora-rank'], '--lora-rank', 8, int(1, 512)),
      lr: num(values.lr, '--lr', 1e-4, (n) => n > 0 && n < 1),
      maxTurns: num(values['max-turns'], '--max-turns', 3, int(1, 100)),
      maxNewTokens: num(values['max-new-tokens'], '--max-new-tokens', 64, int(1, 8192)),
      hintShare: num(values['hint-share'], '--hint-share', 0.5, (n) => n >= 0 && n <= 1),
      boxedReward: num(values['boxed-reward'], '--boxed-reward', 0, (n) => n >= 0 && n <= 10),
      trainSeeds: num(values['train-seeds'], '--train-seeds', 4, int(1, 100_000)),
      evalSeeds: num(values['eval-seeds'], '--eval-seeds', 2, int(1, 10_000)),
      saveEvery: num(values['save-every'], '--save-every', 0, int(0, 100_000)),
    };
    if (values.evaluate !== undefined && values['no-eval']) throw new UsageError('--evaluate and --no-eval contradict each other');
    const checkpoint = values.evaluate !== undefined ? resolve(values.evaluate) : null;
    const bad = checkpoint ? notAnAdapter(checkpoint) : null;
    if (bad) throw new UsageError(bad);
    const { db, dataDir } = openDataDir(values['data-dir'], (x) => io.err(x));
    const s: TrainSettings = { ...settings, out: resolve(values.out ?? join(dataDir, 'train', `grpo-${Date.now().toString(36)}`)) };
    let envs: ReturnType<typeof resolveEnvs>['envs'];
    try {
      // A new data dir gets the seed pack, as the app's first start gives it (`tag:seed` selects it).
      const pack = await importSeedPackIfDue(db);
      if (pack) io.err(`train: a new library: imported the seed pack (${pack.imported} environments), as the app does on its first start`);
      const r = resolveEnvs(db, { selection: s.selection });
      for (const x of r.skipped) io.err(`left out: ${x}`);
      if (r.envs.length === 0) throw new UsageError(`No environment to train on matches "${s.selection}"`);
      envs = r.envs;
    } catch (e) {
      // Refused before anything starts: no runtime, server, venv or trainer.
      db.close();
      throw e;
    }
    const ac = new AbortController();
    const children: ChildProcess[] = [];
    const onSignal = () => {
      ac.abort();
      // The children end on the abort (SIGTERM, then SIGKILL); an evaluation's model plays may still hold
      // the event loop on requests to the stopped server, so a cancelled run exits on its own soon after.
      setTimeout(() => process.exit(130), 10_000).unref();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    const rt = new RuntimeService({
      settings: () => ({ stepTimeoutSec: 30, maxTurns: s.maxTurns, defaultRuntime: runtime === 'pyodide' ? 'pyodide' : 'cpython' }),
      poolSize: Math.max(1, Math.min(4, availableParallelism())),
      pythonProbeCache: join(dataDir, 'cache', 'python-probe.json'),
    });
    const svc = new EpisodeService({ store: new EpisodeStore(db), catalog: memoryCatalog(db), runtime: rt, defaults: () => ({ maxTurns: s.maxTurns }) });
    let closeServer: (() => Promise<void>) | null = null;
    try {
      mkdirSync(s.out, { recursive: true });
      const venv = await findOrCreateTrainVenv({ ...(values['train-venv'] ? { venvDir: values['train-venv'] } : {}), log: (l) => io.err(l) });
      // Training seeds 0..trainSeeds-1; evaluation plays the held-back seeds after them.
      const tasks = taskList(envs, { seeds: s.trainSeeds, seedStart: 0, hint: 'both' });
      let next = 0;
      const served: Served = { svc, envs, tasks, hint: 'both', maxTurns: s.maxTurns, runtime, nextTask: () => tasks[next++ % tasks.length]! };
      const server = await startOpenEnvServer({ served, port: 0, concurrency: 256, version: appVersion(), log: (x) => io.err(x) });
      closeServer = server.close;
      // The fork server starts once the venv is there and the port is bound: a command that ends
      // while it is still coming up leaves it running (as serve-env found, commit d95d291).
      if (runtime !== 'pyodide') rt.native.prestart();
      io.err(`train: ${envs.length} environment(s), ${tasks.length} task(s) served at ${server.url}; ${checkpoint ? `evaluating ${checkpoint}` : `checkpoints in ${s.out}`}`);
      if (!checkpoint) {
        // Episodes the games failed in serve-env's sandbox score 0 and are reported, once each and at the end.
        const failures: string[] = [];
        const line = (l: string) => {
          io.out(l);
          if (l.includes('"episode_failed"')) failures.push(l);
        };
        const code = await runPython(venv.python, trainerArgv(s, server.url), { line, err: (l) => io.err(l), signal: ac.signal, onStart: (c) => children.push(c) });
        if (failures.length) {
          const first = JSON.parse(failures[0]!) as { task?: string; error?: string };
          io.err(`train: ${failures.length} training episode(s) failed in the sandbox and scored 0; the first (${first.task ?? '?'}): ${first.error ?? '?'}`);
        }
        if (ac.signal.aborted) return io.err('train: cancelled'), 130;
        if (code !== 0) return io.err(`train: the trainer exited with ${code}`), 1;
        if (values['no-eval']) return 0;
      }
      const r = await evaluateCheckpoint({
        s, adapter: checkpoint ?? join(s.out, 'adapter-final'), python: venv.python, db, episodes: svc, hashes: envs.map((e) => e.hash), runtime,
        out: (l) => io.out(l), err: (l) => io.err(l), signal: ac.signal, onChild: (c) => children.push(c),
      });
      if (r.code === 130) io.err('train: cancelled');
      return r.code;
    } finally {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
      await closeServer?.().catch(() => {});
      await svc.closeAll();
      await rt.shutdown();
      db.close();
    }
  },
};
