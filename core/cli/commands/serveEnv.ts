import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { CliIO, Command } from '../command';
import { runtimeArg, UsageError } from '../command';
import { commandInfo } from '../catalog';
import { RuntimeService } from '../../runtime/service';
import { SPADE_DEFAULT_BUDGET } from '../../episodes/spade';
import { appVersion } from '../../base/appInfo';
import { openDataDir } from '../../memory/cliDb';
import { memoryCatalog } from '../../episodes/catalog';
import { EpisodeService } from '../../episodes/service';
import { EpisodeStore } from '../../episodes/episodeStore';
import { resolveEnvs, taskList, type HintMode } from '../../openenv/tasks';
import { startOpenEnvServer } from '../../openenv/server';
import type { Served } from '../../openenv/episode';

function int(v: string | undefined, name: string, dflt: number, lo: number, hi: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < lo || n > hi) throw new UsageError(`${name} must be an integer in ${lo}-${hi}, got ${v}`);
  return n;
}

export const serveEnvCommand: Command = {
  ...commandInfo('serve-env'),
  async run(argv, io: CliIO) {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        selection: { type: 'string' },
        port: { type: 'string' },
        host: { type: 'string' },
        token: { type: 'string' },
        hint: { type: 'string' },
        'max-turns': { type: 'string' },
        concurrency: { type: 'string' },
        seeds: { type: 'string' },
        'seed-start': { type: 'string' },
        runtime: { type: 'string' },
        'data-dir': { type: 'string' },
        json: { type: 'boolean' },
      },
      strict: true,
    });
    if ((positionals.length > 0) === (values.selection !== undefined)) throw new UsageError('Give --selection QUERY, or one or more ENV_IDs (library ids or version hashes)');
    const port = int(values.port, '--port', 8000, 0, 65535);
    const hint = (values.hint ?? 'both') as HintMode;
    if (hint !== 'on' && hint !== 'off' && hint !== 'both') throw new UsageError(`--hint must be on, off or both, got ${values.hint}`);
    const maxTurns = int(values['max-turns'], '--max-turns', SPADE_DEFAULT_BUDGET, 1, 10_000);
    const concurrency = int(values.concurrency, '--concurrency', 64, 1, 4096);
    const seeds = int(values.seeds, '--seeds', 8, 1, 100_000);
    const seedStart = int(values['seed-start'], '--seed-start', 0, 0, 2 ** 31 - 1);
    const runtime = runtimeArg(values.runtime, 'auto');

    const { db, dataDir } = openDataDir(values['data-dir'], (m) => io.err(m));
    // What to serve is settled before any interpreter starts: a selection that matches nothing ends
    // the command here, with nothing left running.
    let envs: ReturnType<typeof resolveEnvs>['envs'];
    let tasks: ReturnType<typeof taskList>;
    try {
      const r = resolveEnvs(db, values.selection !== undefined ? { selection: values.selection } : { ids: positionals });
      for (const s of r.skipped) io.err(`left out: ${s}`);
      envs = r.envs;
      if (envs.length === 0) throw new UsageError(values.selection !== undefined ? `No environment to serve matches "${values.selection}"` : 'No environment to serve');
      tasks = taskList(envs, { seeds, seedStart, hint });
      if (tasks.length === 0) throw new UsageError('No task to serve: with --hint on, every selected environment lacks a hint');
    } catch (e) {
      db.close();
      throw e;
    }
    // As `play` does in a cold process: native CPython forked in its bubblewrap sandbox unless
    // --runtime pyodide (or no sandbox); the Pyodide pool never has more interpreters than cores.
    const rt = new RuntimeService({
      settings: () => ({ stepTimeoutSec: 30, maxTurns, defaultRuntime: runtime === 'pyodide' ? 'pyodide' : 'cpython' }),
      poolSize: Math.max(1, Math.min(4, availableParallelism())),
      pythonProbeCache: join(dataDir, 'cache', 'python-probe.json'),
    });
    const svc = new EpisodeService({ store: new EpisodeStore(db), catalog: memoryCatalog(db), runtime: rt, defaults: () => ({ maxTurns }) });
    let closeServer: (() => Promise<void>) | null = null;
    try {
      let next = 0;
      const served: Served = { svc, envs, tasks, hint, maxTurns, runtime, nextTask: () => tasks[next++ % tasks.length]! };
      const server = await startOpenEnvServer({
        served,
        port,
        ...(values.host !== undefined ? { host: values.host, hostExplicit: true } : {}),
        ...(values.token !== undefined ? { token: values.token } : {}),
        concurrency,
        version: appVersion(),
        log: (m) => io.err(m),
      });
      closeServer = server.close;
      // The fork server starts once the port is ours: started earlier, a refused port ended the
      // command while it was still coming up, and RuntimeService.shutdown() did not stop it then.
      if (runtime !== 'pyodide') rt.native.prestart();
      if (values.json) io.out(JSON.stringify({ url: server.url, port: server.port, token: server.token ?? null, environments: envs.length, tasks: tasks.length, hint, max_turns: maxTurns, concurrency, data_dir: dataDir }));
      else {
        io.out(`OpenEnv server for ${envs.length} environment version(s), ${tasks.length} task(s) (GET /tasks), at ${server.url}${server.token ? `  (token: ${server.token}; send it as Authorization: Bearer or ?token=)` : ''}`);
        io.out(`Sessions: /ws, at most ${concurrency} at once; hint ${hint}; budget ${maxTurns} turns; episodes recorded in ${dataDir}`);
        io.out('Press Ctrl+C to stop.');
      }
      await new Promise<void>((done) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          done();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      return 0;
    } finally {
      await closeServer?.().catch(() => {});
      await svc.closeAll();
      await rt.shutdown();
      db.close();
    }
  },
};
