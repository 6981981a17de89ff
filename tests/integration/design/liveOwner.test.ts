// A design round run by `spade-workbench design` in another process on the same data folder, while
// the app (Services) opens that folder: the app must leave the live round to its process (running,
// "in process N") instead of marking it failed, and show it done with its attempts once that
// process ends it. A round whose process has gone is still marked failed, as before.
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { afterAll, expect, it } from 'vitest';
import type { Backend } from '../../../core/api';
import { createHandlers } from '../../../core/handlers';
import { createDispatcher } from '../../../core/server/dispatcher';
import { createInProcessBackend } from '../../../core/server/inProcess';
import { Services } from '../../../core/services/services';
import { openDatabase } from '../../../core/memory/db';
import { tempDir } from '../../helpers/tmp';
import { startStandIn, type StandIn } from '../../helpers/standInOpenAi';

const tmp = tempDir('spade-design-owner-');
let server: StandIn | null = null;
afterAll(async () => {
  await server?.close();
  tmp.cleanup();
});

function app(dataDir: string): { api: Backend; close(): Promise<void> } {
  const services = new Services({ dataDir, shell: 'in-process' });
  const api = createInProcessBackend(createDispatcher(createHandlers(services)), services.events);
  return {
    api,
    close: async () => {
      api.close();
      await services.close();
    },
  };
}

it('leaves a round the CLI is running to the CLI, and shows it done with its attempts when the CLI ends it', async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let asked = 0;
  // The designer answers only when the test says so: the round is surely running meanwhile.
  server = await startStandIn(() => {
    asked++;
    return { content: 'No code this time.', after: held };
  });
  const data = join(tmp.dir, 'data');
  const cli = join(import.meta.dirname, '..', '..', '..', 'bin', 'spade-workbench.mjs');
  const child = spawn(process.execPath, [cli, 'design', '--skills', 'Logical Deduction', '--count', '1', '--attempts', '1', '--designer', server.url, '--designer-model', 'designer', '--play-seeds', '0', '--data-dir', data, '--json'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  for (let i = 0; i < 600 && asked === 0; i++) await new Promise((r) => setTimeout(r, 50));
  expect(asked, err).toBe(1);

  // The app opens the same folder while the CLI's round waits on its designer.
  const a = app(data);
  try {
    const [row] = await a.api.call('design.list', { limit: 10 });
    expect(row).toMatchObject({ status: 'running', live: false, elsewhere: `process ${child.pid}`, error: null });
    expect((await a.api.call('design.get', { id: row!.id })).elsewhere).toBe(`process ${child.pid}`);
    release();
    expect(await exited, err).toBe(0);
    const printed = JSON.parse(out) as { round: string; status: string };
    expect(printed).toMatchObject({ round: row!.id, status: 'done' });
    const [after] = await a.api.call('design.list', { limit: 10 });
    expect(after).toMatchObject({ id: row!.id, status: 'done', error: null, attempts: 1, elsewhere: null });
  } finally {
    await a.close();
  }

  // A round whose process has ended (killed, say) is the workbench's to mark failed at start.
  const ended = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  const db = openDatabase(join(data, 'workbench.sqlite'));
  const now = new Date().toISOString();
  db.prepare("INSERT INTO design_rounds (id, seq, config, status, started_at, updated_at, owner) VALUES ('design-gone', 99, '{}', 'running', ?, ?, ?)").run(now, now, JSON.stringify({ host: hostname(), pid: Number(ended.stdout), start: null }));
  db.close();
  const b = app(data);
  try {
    const gone = (await b.api.call('design.list', { limit: 10 })).find((r) => r.id === 'design-gone');
    expect(gone).toMatchObject({ status: 'failed', error: 'the workbench stopped during the round', elsewhere: null });
  } finally {
    await b.close();
  }
}, 120_000);
