// Runs one import off the main thread (bundled to dist/node/memory-worker.js by scripts/build.mjs).
// The worker opens its own connection to the same WAL database; the main thread keeps serving
// reads while batches commit here. Messages: progress / done / error out, cancel in.
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from './db';
import { errorMessage } from '../api';
import { importPaths, type WorkerImportOptions } from './importer';

interface Job {
  dbPath: string;
  paths: string[];
  nativeBinding?: string;
  opts: WorkerImportOptions;
}

const job = workerData as Job;
const controller = new AbortController();
parentPort!.on('message', (m: { type: string }) => {
  if (m.type === 'cancel') controller.abort();
});

const db = openDatabase(job.dbPath, job.nativeBinding ? { nativeBinding: job.nativeBinding } : {});
importPaths(db, job.paths, { ...job.opts, signal: controller.signal, onProgress: (p) => parentPort!.postMessage({ type: 'progress', p }) })
  .then((summary) => parentPort!.postMessage({ type: 'done', summary }))
  .catch((e: unknown) => parentPort!.postMessage({ type: 'error', message: errorMessage(e) }))
  .finally(() => {
    db.close();
    parentPort!.close();
  });
