import { join } from 'node:path';
import type { Services } from '../services/services';
import { packageRoot } from '../services/appInfo';
import { startEngine, type Engine, type EngineMode } from './engineProcess';
import { startWebHost, type WebHost, type WebHostOptions } from './webHost';

/** The web host's own options (port, bind address, token, log, limits), with the engine's data directory. */
export interface StartAppOptions extends Omit<WebHostOptions, 'dispatch' | 'events' | 'staticRoot'> {
  dataDir: string;
  /** The built renderer; the package's dist/renderer unless given. */
  staticRoot?: string;
  /**
   * Where the engine runs: its own worker thread (the default, what `serve` and the bench use), or
   * behind the same messages on this thread, so a test can read `services` directly.
   */
  engine?: EngineMode;
}

export interface RunningApp {
  /** The engine's services: only in `engine: 'thread'` (in a worker they are on another thread and this throws). */
  readonly services: Services;
  engine: Engine;
  host: WebHost;
  close(): Promise<void>;
}

/** The web mode: the web host on this thread, the engine behind core/host/engineProcess.ts. */
export async function startApp(opts: StartAppOptions): Promise<RunningApp> {
  const { dataDir, staticRoot, engine: mode, ...hostOptions } = opts;
  const engine = await startEngine({ dataDir, shell: 'web', mode: mode ?? 'worker', importSeed: true });
  let host: WebHost;
  try {
    host = await startWebHost({ ...hostOptions, dispatch: engine.dispatch, events: engine.events, staticRoot: staticRoot ?? join(packageRoot(), 'dist', 'renderer') });
  } catch (e) {
    await engine.close();
    throw e;
  }
  return {
    get services() {
      return engine.services;
    },
    engine,
    host,
    async close() {
      await host.close();
      await engine.close();
    },
  };
}
