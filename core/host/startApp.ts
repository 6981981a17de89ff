import { join } from 'node:path';
import { createHandlers } from '../handlers';
import { createDispatcher } from '../server/dispatcher';
import { Services } from '../services/services';
import { packageRoot } from '../base/appInfo';
import { startWebHost, type WebHost, type WebHostOptions } from './webHost';

/** The web host's own options (port, bind address, token, log, limits), with the engine's data directory. */
export interface StartAppOptions extends Omit<WebHostOptions, 'dispatch' | 'events' | 'staticRoot'> {
  dataDir: string;
  /** The built renderer; the package's dist/renderer unless given. */
  staticRoot?: string;
}

export interface RunningApp {
  services: Services;
  host: WebHost;
  close(): Promise<void>;
}

/** The web mode: engine + web host in one process (what `serve`, the e2e tests and the bench use). */
export async function startApp(opts: StartAppOptions): Promise<RunningApp> {
  const { dataDir, staticRoot, ...hostOptions } = opts;
  const services = new Services({ dataDir, shell: 'web' });
  const dispatch = createDispatcher(createHandlers(services), (m) => services.log('error', 'api', m));
  let host: WebHost;
  try {
    host = await startWebHost({ ...hostOptions, dispatch, events: services.events, staticRoot: staticRoot ?? join(packageRoot(), 'dist', 'renderer') });
  } catch (e) {
    await services.close();
    throw e;
  }
  // Non-blocking: the UI comes up at once and the library fills in with progress events.
  services.memory.importSeedPackIfEmpty();
  return {
    services,
    host,
    async close() {
      await host.close();
      await services.close();
    },
  };
}
