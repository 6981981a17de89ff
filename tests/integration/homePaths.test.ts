import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createHandlers } from '../../core/handlers';
import { createDispatcher } from '../../core/server/dispatcher';
import { createInProcessBackend } from '../../core/server/inProcess';
import { Services } from '../../core/services/services';
import type { Backend, ImportProgress } from '../../core/api';
import { expandHome, sshLocalPaths } from '../../core/handlers/paths';
import { tempDir } from '../helpers/tmp';
import { gameSource, write } from './memory/fixtures';

// Issue 31: `~` in a path field means the user's home, as in their shell, in every call that takes one.
let tmp: ReturnType<typeof tempDir>;
let services: Services;
let api: Backend;
let savedHome: string | undefined;
beforeEach(() => {
  tmp = tempDir('spade-home-');
  savedHome = process.env.HOME;
  // os.homedir() reads HOME on every call: the test's home is a temporary folder.
  process.env.HOME = join(tmp.dir, 'home');
  mkdirSync(process.env.HOME);
  services = new Services({ dataDir: join(tmp.dir, 'data'), shell: 'in-process' });
  api = createInProcessBackend(createDispatcher(createHandlers(services)), services.events);
});
afterEach(async () => {
  api.close();
  await services.close();
  if (savedHome === undefined) delete process.env.HOME;
  else process.env.HOME = savedHome;
  tmp.cleanup();
});

function waitDone(jobId: string): Promise<ImportProgress> {
  return new Promise((resolve) => {
    const off = api.on('memory.importProgress', (p) => {
      if (p.jobId === jobId && (p.phase === 'done' || p.phase === 'failed')) {
        off();
        resolve(p);
      }
    });
  });
}

describe('~ in path fields', () => {
  it('imports from ~/folder and exports into ~/folder', async () => {
    const home = process.env.HOME!;
    for (let i = 0; i < 2; i++) write(join(home, 'runs'), `game_00001_00${i}_logic.py`, gameSource(i, `Home${i}Env`));
    const done = waitDone('home-import');
    await api.call('memory.import', { paths: ['~/runs'], jobId: 'home-import' });
    const p = await done;
    expect(p.phase).toBe('done');
    expect(p.summary?.imported).toBe(2);

    const r = await api.call('memory.export', { selection: { query: 'Home0Env' }, format: 'jsonl', outDir: '~/exported' });
    expect(r.outDir).toBe(join(home, 'exported'));
    expect(existsSync(join(home, 'exported'))).toBe(true);
    expect(readdirSync(join(home, 'exported')).length).toBeGreaterThan(0);
    // Nothing was written into a folder literally named "~" beside the process.
    expect(existsSync(join(process.cwd(), '~'))).toBe(false);
  });

  it('expands only ~ and ~/…, and the local files of an SSH target', () => {
    expect(expandHome('~', '/h')).toBe('/h');
    expect(expandHome('~/a/b', '/h')).toBe('/h/a/b');
    expect(expandHome('~bob/a', '/h')).toBe('~bob/a');
    expect(expandHome('/x/~/y', '/h')).toBe('/x/~/y');
    const home = process.env.HOME!;
    expect(sshLocalPaths({ host: 'gpu', identityFile: '~/.ssh/id_ed25519', knownHostsFile: '~/kh' })).toEqual({
      host: 'gpu',
      identityFile: join(home, '.ssh/id_ed25519'),
      knownHostsFile: join(home, 'kh'),
    });
  });

  it('refuses a blank path in words', async () => {
    await expect(api.call('memory.export', { selection: { seeds: true }, format: 'jsonl', outDir: '   ' })).rejects.toMatchObject({ code: 'invalid_input', message: 'A path cannot be empty.' });
  });
});
