import { availableParallelism } from 'node:os';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ChildProcess } from 'node:child_process';
import type { CliIO, Command } from '../command';
import { UsageError } from '../command';
import { commandInfo } from '../catalog';
import { RuntimeService } from '../../runtime/service';
import { appVersion } from '../../base/appInfo';
import { openDataDir } from '../../memory/cliDb';
import { memoryCatalog } from '../../episodes/catalog';
import { EpisodeService } from '../../episodes/service';
import { EpisodeStore } from '../../episodes/episodeStore';
import { resolveEnvs, taskList } from '../../openenv/tasks';
import { startOpenEnvServer } from '../../openenv/server';
import type { Served } from '../../openenv/episode';
import { resolveLocalModel } from '../../models/localModel';
import { findOrCreateTrainVenv } from '../../train/venv';
import { modelArgs, runPython, trainerArgv, trainScript, type TrainSettings } from '../../train/run';
import { RunService } from '../../runs/service';
import { SettingsStore } from '../../memory/settingsStore';
import { fmtNum } from '../../memory/cliDb';

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
        'train-venv': { type: 'string' }, json: { type: 'boolean' },
      },
      strict: true,
    });
    if (values.selection === undefined) throw new UsageError('Give --selection QUERY (the environments to train on)');
    const runtime = values.runtime ?? 'auto';
    if (runtime !== 'auto' && runtime !== 'pyodide' && runtime !== 'cpython') throw new UsageError(`--runtime must be auto, pyodide or cpython, got ${runtime}`);
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
    };
    const { db, dataDir } = openDataDir(values['data-dir'], (x) => io.err(x));
    const s: TrainSettings = { ...settings, out: resolve(values.out ?? join(dataDir, 'train', `grpo-${Date.now().toString(36)}`)) };
    let envs: ReturnType<typeof resolveEnvs>['envs'];
    try {
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
      io.err(`train: ${envs.length} environment(s), ${tasks.length} task(s) served at ${server.url}; checkpoints in ${s.out}`);
      const code = await runPython(venv.python, trainerArgv(s, server.url), { line: (l) => io.out(l), err: (l) => io.err(l), signal: ac.signal, onStart: (c) => children.push(c) });
      if (ac.signal.aborted) return io.err('train: cancelled'), 130;
      if (code !== 0) return io.err(`train: the trainer exited with ${code}`), 1;
      if (values['no-eval']) return 0;
      return await evaluate(s, venv.python, dataDir, runtime, io, ac.signal, children);
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

/** Base model and checkpoint on the held-back seeds, hinted and unhinted, as two model runs; prints the comparison. */
async function evaluate(s: TrainSettings, python: string, dataDir: string, runtime: string, io: CliIO, signal: AbortSignal, children: ChildProcess[]): Promise<number> {
  const adapter = join(s.out, 'adapter-final');
  let url: string | null = null;
  let ready!: () => void;
  const listening = new Promise<void>((r) => (ready = r));
  const exited = runPython(python, [trainScript('spade_serve_model.py'), '--model', s.model, ...(s.ggufFile ? ['--gguf-file', s.ggufFile] : []), '--adapter', adapter, '--max-new-tokens', String(s.maxNewTokens)], {
    line: (l) => {
      try {
        const j = JSON.parse(l) as { event?: string; url?: string };
        if (j.event === 'listening' && j.url) (url = j.url), ready();
      } catch {
        io.err(l);
      }
    },
    err: (l) => io.err(l),
    signal,
    onStart: (c) => children.push(c),
  });
  await Promise.race([listening, exited]);
  if (!url) return io.err('train: the checkpoint server did not start'), 1;
  const { playCommand } = await import('./play');
  const ids: Record<string, string> = {};
  for (const model of ['base', 'checkpoint']) {
    let text = '';
    const argv = ['--selection', s.selection, '--endpoint', url, '--model', model, '--seeds', String(s.evalSeeds), '--seed-start', String(s.trainSeeds), '--max-turns', String(s.maxTurns), '--max-tokens', String(s.maxNewTokens), '--runtime', runtime, '--data-dir', dataDir, '--json'];
    const aborted = new Promise<number>((r) => (signal.aborted ? r(130) : signal.addEventListener('abort', () => r(130), { once: true })));
    // Cancel does not wait for the plays to notice that the checkpoint server is gone.
    const code = await Promise.race([playCommand.run(argv, { out: (t) => (text += t), err: (t) => io.err(t) }), aborted]);
    if (signal.aborted) return 130;
    const runId = (JSON.parse(text) as { run_id: string }).run_id;
    if (code !== 0 && !runId) return io.err(`train: evaluating ${model} failed`), 1;
    ids[model] = runId;
    io.out(JSON.stringify({ event: 'evaluated', model, run_id: runId, adapter: model === 'checkpoint' ? adapter : null }));
  }
  const { db } = openDataDir(dataDir);
  try {
    const runs = new RunService({ db, catalog: memoryCatalog(db), minShare: () => new SettingsStore(db).get().runMinSuccess });
    const c = runs.compare(ids.base!, ids.checkpoint!);
    io.out(`before: run ${ids.base} (base model)   after: run ${ids.checkpoint} (checkpoint ${adapter})`);
    io.out(`${'environment'.padEnd(28)} ${'regret A'.padStart(9)} ${'regret B'.padStart(9)} ${'Δ regret'.padStart(9)} ${'win A'.padStart(7)} ${'win B'.padStart(7)} ${'Δ win'.padStart(7)}`);
    const sg = (v: number | null) => (v === null ? '-' : `${v >= 0 ? '+' : ''}${v.toFixed(3)}`);
    for (const r of c.rows) io.out(`${(r.envName ?? r.envHash.slice(0, 12)).slice(0, 28).padEnd(28)} ${fmtNum(r.a?.regret ?? null, 3).padStart(9)} ${fmtNum(r.b?.regret ?? null, 3).padStart(9)} ${sg(r.regretDelta).padStart(9)} ${fmtNum(r.a?.winRate ?? null).padStart(7)} ${fmtNum(r.b?.winRate ?? null).padStart(7)} ${sg(r.winRateDelta).padStart(7)}`);
    io.out(`compare: spade-workbench runs compare ${ids.base} ${ids.checkpoint}`);
  } finally {
    db.close();
  }
  return 0;
}
