/**
 * `serve-env --runtime cpython` stopped as it starts: SIGTERM the moment it says where it listens, while
 * its fork server may still be coming up (NativeRuntime.prestart's probes answer after shutdown()), and
 * it exits. Before the fix the fork server started after the shutdown and held the process forever.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp';
import { ROOT, runCli, serveEnv } from './serveEnvHelpers';

const GAME = join(ROOT, 'resources', 'seed-pack', 'games', 'game_00000_001_pattern_recognition.py');
const tmp = tempDir('spade-serve-stop-');
const data = join(tmp.dir, 'data');

beforeAll(async () => {
  const imp = await runCli(['import', GAME, '--data-dir', data, '--quiet']);
  expect(imp.code, imp.err).toBe(0);
});
afterAll(() => tmp.cleanup());

it('exits when stopped as soon as it listens, every time', async () => {
  for (let i = 0; i < 4; i++) {
    const s = await serveEnv(['1', '--data-dir', data, '--runtime', 'cpython']);
    const exited = new Promise<number | null>((done) => (s.child.exitCode !== null ? done(s.child.exitCode) : s.child.once('exit', (code) => done(code))));
    s.child.kill('SIGTERM');
    // A process that never exits fails here by the test's own time limit.
    expect(await exited).not.toBeUndefined();
  }
}, 120_000);
