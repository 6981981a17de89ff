import { join } from 'node:path';
import { createHandlers } from '../handlers';
import { createDispatcher } from '../server/dispatcher';
import { Services } from '../services/services';
import { packageRoot } from '../services/appInfo';
import { startWebHost, type WebHost, type WebHostLimits } from './webHost';

export interface StartAppOptions {
  dataDir: string;
  port?: number;
  host?: string;
  hostExplicit?: boolean;
  token?: string;
  staticRoot?: string;
  log?: (msg: string) => void;
  limits?: Partial<WebHostLimits>;
}

export interface RunningApp {
  services: Services;
  host: WebHost;
  close(): Promise<void>;
}

/** The web mode: engine + web host in one process (what `serve`, the e2e tests and the bench use). */
export async function startApp(opts: StartAppOptions): Promise<RunningApp> {
  const services = new Services({ dataDir: opts.dataDir, shell: 'web' });
  const dispatch = createDispatcher(createHandlers(services), (m) => services.log('error', 'api', m));
  let host: WebHost;
  try {
    host = await startWebHost({
      dispatch,
      events: services.events,
      staticRoot: opts.staticRoot ?? join(packageRoot(), 'dist', 'renderer'),
      ...(opts.port !== undefined ? { port: opts.port } : {}),
      ...(opts.host !== undefined ? { host: opts.host } : {}),
      ...(opts.hostExplicit !== undefined ? { hostExplicit: opts.hostExplicit } : {}),
      ...(opts.token !== undefined ? { token: opts.token } : {}),
      ...(opts.log ? { log: opts.log } : {}),
      ...(opts.limits ? { limits: opts.limits } : {}),
    });
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
