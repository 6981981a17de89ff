// The engine's thread (bundled to dist/node/engine-worker.js by scripts/build.mjs): services, the
// dispatcher, SQLite, job polling and the model client all run here, never on the window's thread.
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { errorMessage } from '../api';
import type { Sealer } from '../jobs/secrets';
import { bootEngine, type EngineBootOptions } from './engineBoot';

interface WorkerData extends EngineBootOptions {
  /** Which platform hooks the host offers (Electron: the dialogs, the browser, the keychain). */
  hooks: { openExternal: boolean; pickPaths: boolean; sealer: boolean };
  /** The side channel of a hook the engine must have at once: a flag to wait on and a port to read. */
  sync: { flag: SharedArrayBuffer; port: MessagePort };
}

const data = workerData as WorkerData;
const port = parentPort;
if (!port) throw new Error('engineWorker runs only as a worker thread'); // not-user-facing: a start-up guard

/**
 * Blocks this thread (never the host's) until the host answers: the sealer's interface is
 * synchronous and only Electron's main process can reach the keychain.
 */
function hostSync(op: string, args: unknown): unknown {
  const flag = new Int32Array(data.sync.flag);
  Atomics.store(flag, 0, 0);
  port!.postMessage({ t: 'hostRequestSync', op, args });
  if (Atomics.wait(flag, 0, 0, 30_000) === 'timed-out') throw new Error(`The host did not answer ${op} within 30 s`); // not-user-facing: the caller wraps it
  const reply = receiveMessageOnPort(data.sync.port)?.message as { ok: boolean; value?: unknown; message?: string } | undefined;
  if (!reply?.ok) throw new Error(reply?.message ?? `No reply from the host to ${op}`); // not-user-facing: the caller wraps it
  return reply.value;
}

try {
  bootEngine(port, data, (ask) => {
    const sealer: Sealer | undefined = data.hooks.sealer
      ? {
          encrypt: (plain) => Buffer.from(hostSync('seal', plain) as Uint8Array),
          decrypt: (sealed) => hostSync('unseal', new Uint8Array(sealed)) as string,
        }
      : undefined;
    return {
      platform: {
        ...(data.hooks.openExternal ? { openExternal: async (url: string) => void (await ask('openExternal', url)) } : {}),
        ...(data.hooks.pickPaths ? { pickPaths: async (o: { title: string; folders: boolean; multiple: boolean }) => (await ask('pickPaths', o)) as string[] } : {}),
      },
      ...(sealer ? { secretSealer: sealer } : {}),
    };
  });
  port.postMessage({ t: 'ready' });
} catch (e) {
  port.postMessage({ t: 'failed', message: errorMessage(e) });
  process.exit(1);
}
