import { createHandlers } from '../handlers';
import { createDispatcher } from '../server/dispatcher';
import { serveEngine, type PortLike } from '../server/engineBoundary';
import { Services, type ServiceOptions } from '../services/services';

/** What the engine needs to start, the same in a worker and on the host's own thread. */
export interface EngineBootOptions {
  dataDir: string;
  shell: 'web' | 'electron';
  nativeBinding?: string;
  /** Import the bundled seed pack when the library is empty (the app does, tests that seed their own do not care). */
  importSeed?: boolean;
  slowCallMs?: number;
}

/**
 * Builds the services and the one dispatcher and serves them on `port`. The platform hooks and the
 * sealer come from the host (the window's process owns the dialogs and the keychain).
 */
export function bootEngine(
  port: PortLike,
  opts: EngineBootOptions,
  hooks: (hostRequest: (op: string, args: unknown) => Promise<unknown>) => Pick<ServiceOptions, 'platform' | 'secretSealer'>,
): Services {
  let ask: (op: string, args: unknown) => Promise<unknown> = () => Promise.reject(new Error('The engine is not served yet')); // not-user-facing: hooks run only after serving starts
  const services = new Services({
    dataDir: opts.dataDir,
    shell: opts.shell,
    ...(opts.nativeBinding ? { nativeBinding: opts.nativeBinding } : {}),
    ...hooks((op, args) => ask(op, args)),
  });
  const log = (level: 'debug' | 'info' | 'warn' | 'error', source: string, message: string) => services.log(level, source, message);
  const dispatch = createDispatcher(createHandlers(services), (m) => log('error', 'api', m));
  const served = serveEngine(port, { dispatch, events: services.events, log, close: () => services.close(), ...(opts.slowCallMs !== undefined ? { slowCallMs: opts.slowCallMs } : {}) });
  ask = served.hostRequest;
  // Non-blocking: the UI comes up at once and the library fills in with progress events.
  if (opts.importSeed) services.memory.importSeedPackIfEmpty();
  return services;
}
