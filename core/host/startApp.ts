import { join } from 'node:path';
import type { Services } from '../services/services';
import { packageRoot } from '../base/appInfo';
import { launchEngine, type Engine, type EngineMode } from './engineProcess';
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
  /** Settles when the engine answers (rejects with why it could not start); the page is served before. */
  ready: Promise<void>;
  host: WebHost;
  close(): Promise<void>;
}

/** The web mode: the web host on this thread, the engine behind core/host/engineProcess.ts. */
export async function startApp(opts: StartAppOptions): Promise<RunningApp> {
  const { dataDir, staticRoot, engine: mode, ...hostOptions } = opts;
  // Not awaited: the worker loads while the host starts and serves the page (host.first_render_ms);
  // the page's first calls wait in the engine's queue.
  const engine = launchEngine({ dataDir, shell: 'web', mode: mode ?? 'worker', importSeed: true });
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
    ready: engine.ready,
    host,
    async close() {
      await host.close();
      await engine.close();
    },
  };
}
