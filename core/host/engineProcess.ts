import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker } from 'node:worker_threads';
import { errorMessage } from '../api';
import { DomainError } from '../errors';
import type { Dispatch } from '../server/dispatcher';
import { EngineClient, EventHub, type EngineToHost, type HostHandlers, type PortLike } from '../server/engineBoundary';
import type { Services, ServiceOptions } from '../services/services';
import { bootEngine, type EngineBootOptions } from './engineBoot';

/**
 * The one boundary between the process that owns the window (Electron's main, the web host) and the
 * engine. `worker` (the app) runs the engine in a worker thread; `thread` runs the same engine
 * behind the same messages on this thread, for tests that read its services directly.
 */
export type EngineMode = 'worker' | 'thread';

export interface EngineOptions extends EngineBootOptions {
  mode?: EngineMode;
  platform?: ServiceOptions['platform'];
  secretSealer?: ServiceOptions['secretSealer'];
  /** Unexpected stops tolerated within a minute; past that the engine stays down and every call says why. */
  maxRestarts?: number;
}

export interface Engine {
  readonly mode: EngineMode;
  /** Settles when the engine first answers; calls made before then wait in its queue. */
  readonly ready: Promise<void>;
  readonly events: EventHub;
  readonly dispatch: Dispatch;
  call(name: string, input: unknown, signal?: AbortSignal): Promise<unknown>;
  /** The engine's services; only where they share this thread (`thread` mode). */
  readonly services: Services;
  state(): 'starting' | 'running' | 'restarting' | 'down' | 'closed';
  /** How many times the engine was started again after an unexpected stop. */
  readonly restarts: number;
  /** Ends the engine's thread abruptly, as a crash would (tests of the supervision). */
  kill(): Promise<void>;
  close(): Promise<void>;
}

/** The bundled entry: next to this bundle (dist/node), or dist/node from dist/electron or a source run. */
export function engineWorkerFile(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const f of [join(here, 'engine-worker.js'), join(here, '..', 'node', 'engine-worker.js'), join(here, '..', '..', 'dist', 'node', 'engine-worker.js')]) {
    if (existsSync(f)) return f;
  }
  throw new DomainError('unavailable', 'The engine is not built (dist/node/engine-worker.js): run npm run build');
}

function hostHandlers(opts: EngineOptions): HostHandlers {
  const h: HostHandlers = {};
  const open = opts.platform?.openExternal;
  const pick = opts.platform?.pickPaths;
  if (open) h.openExternal = (url) => open(String(url));
  if (pick) h.pickPaths = (o) => pick(o as Parameters<typeof pick>[0]);
  return h;
}

function logLine(events: EventHub, level: 'info' | 'error', message: string): void {
  events.emit('log.line', { time: new Date().toISOString(), level, source: 'engine', message });
}

/**
 * Starts the engine without waiting for it: the web host can serve the page while the worker loads
 * (about half a second), and calls made meanwhile are answered once it is up. If it cannot start,
 * `ready` rejects and every call fails with `unavailable` and the reason.
 */
export function launchEngine(opts: EngineOptions): Engine {
  const engine = (opts.mode ?? 'worker') === 'thread' ? startOnThisThread(opts) : startInWorker(opts);
  engine.ready.catch(() => {}); // read by whoever awaits it; a failure also reaches every call
  return engine;
}

/** Starts the engine and waits until it answers (or rejects with why it could not start). */
export async function startEngine(opts: EngineOptions): Promise<Engine> {
  const engine = launchEngine(opts);
  await engine.ready;
  return engine;
}

function closeVia(client: EngineClient, waitClosed: Promise<void>): Promise<void> {
  client.send({ t: 'close' });
  return waitClosed;
}

function startOnThisThread(opts: EngineOptions): Engine {
  const events = new EventHub();
  let closed: () => void = () => {};
  const whenClosed = new Promise<void>((r) => (closed = r));
  const client = new EngineClient(events, {}, (m) => m.t === 'closed' && closed());
  const { port1, port2 } = new MessageChannel();
  // The platform hooks are this thread's own functions here: nothing to forward.
  const services = bootEngine(port2 as PortLike, opts, () => ({
    ...(opts.platform ? { platform: opts.platform } : {}),
    ...(opts.secretSealer ? { secretSealer: opts.secretSealer } : {}),
  }));
  client.attach(port1 as PortLike);
  let state: ReturnType<Engine['state']> = 'running';
  return {
    mode: 'thread',
    ready: Promise.resolve(),
    events,
    dispatch: client.dispatch,
    call: (name, input, signal) => client.call(name, input, { transport: 'in-process' }, signal),
    services,
    state: () => state,
    restarts: 0,
    async kill() {
      client.fail('The engine was stopped');
      state = 'down';
      await services.close();
    },
    async close() {
      if (state === 'closed') return;
      if (state === 'running') await closeVia(client, whenClosed);
      state = 'closed';
      client.fail('The engine is closed');
      port1.close();
      port2.close();
    },
  };
}

function startInWorker(opts: EngineOptions): Engine {
  const file = engineWorkerFile();
  const events = new EventHub();
  const handlers = hostHandlers(opts);
  const sealer = opts.secretSealer;
  const maxRestarts = opts.maxRestarts ?? 3;
  const stops: number[] = [];
  let state: ReturnType<Engine['state']> = 'starting';
  let restarts = 0;
  let booting: Promise<void> = Promise.resolve();
  let worker: Worker;
  let lifecycle: (m: Extract<EngineToHost, { t: 'ready' | 'failed' | 'closed' }>) => void = () => {};
  const client = new EngineClient(events, handlers, (m) => lifecycle(m));

  const spawn = (): Promise<void> => {
    const flag = new SharedArrayBuffer(4);
    const side = new MessageChannel();
    const w = new Worker(file, {
      workerData: {
        dataDir: opts.dataDir,
        shell: opts.shell,
        importSeed: opts.importSeed ?? false,
        ...(opts.nativeBinding ? { nativeBinding: opts.nativeBinding } : {}),
        ...(opts.slowCallMs !== undefined ? { slowCallMs: opts.slowCallMs } : {}),
        hooks: { openExternal: !!handlers.openExternal, pickPaths: !!handlers.pickPaths, sealer: !!sealer },
        sync: { flag, port: side.port2 },
      },
      transferList: [side.port2],
    });
    worker = w;
    // The sealer's answer goes on the side port and wakes the engine's thread, which is waiting on the flag.
    w.on('message', (raw: EngineToHost) => {
      if (raw.t !== 'hostRequestSync') return;
      let reply: { ok: boolean; value?: unknown; message?: string };
      try {
        if (!sealer) throw new Error('No keychain on this host'); // not-user-facing: sent to the engine, which wraps it
        reply = { ok: true, value: raw.op === 'seal' ? new Uint8Array(sealer.encrypt(String(raw.args))) : sealer.decrypt(Buffer.from(raw.args as Uint8Array)) };
      } catch (e) {
        reply = { ok: false, message: errorMessage(e) };
      }
      side.port1.postMessage(reply);
      const f = new Int32Array(flag);
      Atomics.store(f, 0, 1);
      Atomics.notify(f, 0);
    });
    client.attach(w);
    let lastError: string | null = null;
    w.on('error', (e) => (lastError = errorMessage(e)));
    const ready = new Promise<void>((resolve, reject) => {
      const startFailed = (reason: string) => {
        state = 'down';
        client.fail(reason);
        reject(new DomainError('unavailable', reason));
      };
      lifecycle = (m) => {
        if (m.t === 'ready') {
          state = 'running';
          resolve();
        } else if (m.t === 'failed') {
          lastError = m.message;
          startFailed(`The engine could not start: ${m.message}`);
        }
      };
      w.once('exit', (code) => {
        side.port1.close();
        if (w !== worker || state === 'closed') return;
        const why = lastError ?? `its thread ended with code ${code}`;
        if (state !== 'running') {
          startFailed(`The engine could not start: ${why}`);
          return;
        }
        const now = Date.now();
        stops.push(now);
        while (stops.length && stops[0]! < now - 60_000) stops.shift();
        if (stops.length > maxRestarts) {
          state = 'down';
          const reason = `The engine stopped (${why}) ${stops.length} times within a minute and was not started again; restart the workbench`;
          client.fail(reason);
          logLine(events, 'error', reason);
          return;
        }
        state = 'restarting';
        client.fail(`The engine stopped (${why}); it is starting again, try once more`);
        logLine(events, 'error', `The engine stopped (${why}); starting it again`);
        restarts++;
        booting = spawn();
        void booting.catch((e: unknown) => {
          state = 'down';
          client.fail(errorMessage(e));
          logLine(events, 'error', errorMessage(e));
        });
      });
    });
    return ready;
  };

  const ready = spawn();
  booting = ready;
  return {
    mode: 'worker',
    ready,
    events,
    dispatch: client.dispatch,
    call: (name, input, signal) => client.call(name, input, { transport: 'in-process' }, signal),
    get services(): Services {
      throw new DomainError('unavailable', "The engine runs in a worker thread: its services are not on this thread (start it with mode 'thread' to read them)");
    },
    state: () => state,
    get restarts() {
      return restarts;
    },
    async kill() {
      const w = worker;
      await w.terminate();
    },
    async close() {
      if (state === 'closed') return;
      // An engine still starting is let finish (bounded), so its services close instead of being cut mid-migration.
      if (state === 'starting' || state === 'restarting') await Promise.race([booting.catch(() => {}), new Promise((r) => setTimeout(r, 15_000).unref())]);
      const w = worker;
      const wasRunning = state === 'running';
      state = 'closed';
      if (wasRunning) {
        const closedMsg = new Promise<void>((r) => {
          lifecycle = (m) => m.t === 'closed' && r();
        });
        client.send({ t: 'close' });
        // Closing waits for the services (child processes, the database); a stuck one is not waited on forever.
        await Promise.race([closedMsg, new Promise((r) => setTimeout(r, 15_000).unref())]);
      }
      client.fail('The engine is closed');
      await w.terminate();
    },
  };
}
