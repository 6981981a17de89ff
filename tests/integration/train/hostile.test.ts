/**
 * A hostile game in a training selection: during training its reset tries to read a secret (a file
 * outside its sandbox and a variable of the trainer's environment), to write a file outside, and to
 * spawn a process that writes one; it says what it got and whether it runs inside the trainer's
 * Python (torch or trl loaded), then fails. serve-env plays it in the runtime's sandbox, never in the
 * trainer's process: every attack is refused, the episodes fail there and score 0, the run goes on,
 * and `train` reports the failed episodes with the game's own words. Needs the training venv.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { trainVenvDir } from '../../../core/train/venv';
import { tempDir } from '../../helpers/tmp';
import { execFile } from 'node:child_process';
import { CLI, runCli } from '../openenv/serveEnvHelpers';

/** The CLI with room to load the model and train a step (runCli stops at 60 s). */
function runLong(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string; err: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [CLI, ...args], { env, maxBuffer: 64 * 1024 * 1024, timeout: 800_000 }, (e, out, err) => done({ code: e ? ((e as { code?: number }).code ?? 1) : 0, out, err }));
  });
}

const tmp = tempDir('spade-train-hostile-');
afterAll(() => tmp.cleanup());

const SECRET_FILE = join(tmp.dir, 'secret-token.txt');
const WROTE = join(tmp.dir, 'escaped-write.txt');
const SPAWNED = join(tmp.dir, 'escaped-spawn.txt');
const SECRET = `s3cret-${process.pid}-${Date.now()}`;

const HOSTILE = `import os, sys


class HostileTrainingEnv:
    def reset(self, seed=None):
        got = []
        try:
            with open(${JSON.stringify(SECRET_FILE)}) as f:
                got.append("secret-file READ " + f.read())
        except Exception as e:
            got.append("secret-file " + type(e).__name__)
        v = os.environ.get("SPADE_HOSTILE_SECRET")
        got.append("secret-env " + ("READ " + v if v else "absent"))
        try:
            with open(${JSON.stringify(WROTE)}, "w") as f:
                f.write("escaped")
            got.append("write WROTE")
        except Exception as e:
            got.append("write " + type(e).__name__)
        # At call time, not at load (the sandbox refuses a module-level import of subprocess at load).
        try:
            sp = __import__("subprocess")
            r = sp.run(["/bin/sh", "-c", "echo escaped > " + ${JSON.stringify(SPAWNED)}], capture_output=True, timeout=5)
            got.append("spawn rc=%d" % r.returncode)
        except BaseException as e:
            got.append("spawn " + type(e).__name__)
        try:
            got.append("system rc=%d" % os.system("echo escaped > " + ${JSON.stringify(SPAWNED)}))
        except BaseException as e:
            got.append("system " + type(e).__name__)
        got.append("in-trainer " + ("YES" if ("torch" in sys.modules or "trl" in sys.modules) else "no"))
        raise RuntimeError("hostile report: " + "; ".join(got))

    def step(self, action):
        return "nothing", 0.0, True, False, {}

    def solution(self):
        return "none"
`;

it('plays a hostile game only in the sandbox during training: its attacks fail there, the run goes on and reports it', { timeout: 900_000 }, async () => {
  expect(existsSync(join(trainVenvDir(), 'bin', 'python')), 'make the training venv first: node scripts/train-venv.mjs').toBe(true);
  writeFileSync(SECRET_FILE, SECRET);
  const games = join(tmp.dir, 'games');
  mkdirSync(games);
  writeFileSync(join(games, 'game_00000_001_logical_deduction.py'), HOSTILE);
  const data = join(tmp.dir, 'data');
  const imp = await runCli(['import', games, '--data-dir', data, '--quiet']);
  expect(imp.code, imp.err).toBe(0);
  // The secret is in the trainer's environment (train and its children inherit it); the game must not see it.
  const r = await runLong(['train', '--selection', 'HostileTrainingEnv', '--steps', '1', '--group-size', '2', '--prompts-per-step', '1', '--max-turns', '1', '--max-new-tokens', '8', '--train-seeds', '2', '--no-eval', '--runtime', 'cpython', '--data-dir', data, '--out', join(tmp.dir, 'run')], { ...process.env, SPADE_HOSTILE_SECRET: SECRET });
  const all = `${r.out}\n${r.err}`;
  // The run went on past the failed episodes: the trainer finished its step and saved its adapter.
  expect(r.code, all.slice(-4000)).toBe(0);
  expect(r.out).toContain('"event": "saved"');
  const failed = r.out.split('\n').filter((l) => l.includes('"episode_failed"')).map((l) => JSON.parse(l) as { task: string; error: string });
  expect(failed.length).toBe(2);
  for (const f of failed) {
    expect(f.error).toMatch(/hostile report: /);
    // Every attack was tried in the sandbox and refused there.
    expect(f.error).toMatch(/secret-file \w+Error/);
    expect(f.error).toMatch(/secret-env absent/);
    expect(f.error).toMatch(/write \w+Error/);
    expect(f.error).toMatch(/spawn /);
    expect(f.error).toMatch(/in-trainer no/);
  }
  expect(r.err).toMatch(/train: 2 training episode\(s\) failed in the sandbox and scored 0; the first \(.+\): .*hostile report/);
  expect(all).not.toContain(SECRET);
  expect(existsSync(WROTE)).toBe(false);
  expect(existsSync(SPAWNED)).toBe(false);
});
