import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { NativeRuntime, probePython } from '../../../core/runtime/native';
import { tempDir } from '../../helpers/tmp';

/**
 * The interpreter a native session runs must be the one the probe found and the UI names. Sessions
 * start with a scrubbed PATH, so a `python3` found on the user's PATH (pyenv, a venv, conda) has to
 * be kept by its real path, or another interpreter (often /usr/bin/python3) runs the games.
 */
const tmp = tempDir('spade-python-probe-');
const savedPath = process.env.PATH;
const savedOverride = process.env.SPADE_PYTHON;
const savedVenv = process.env.SPADE_WORKBENCH_VENV;
afterAll(() => {
  process.env.PATH = savedPath;
  if (savedOverride !== undefined) process.env.SPADE_PYTHON = savedOverride;
  if (savedVenv !== undefined) process.env.SPADE_WORKBENCH_VENV = savedVenv;
  probePython(true);
  tmp.cleanup();
});

const WHERE = `import sys
class WhereEnv:
    def reset(self, seed=None):
        return sys.executable, {}
    def step(self, action):
        return "o", 0.0, True, False, {}
`;

test.runIf(probePython())('a python3 found on the PATH is the one sessions run', async () => {
  // A venv seeing the system's packages (numpy included), put first on the PATH as a user would.
  const venv = join(tmp.dir, 'venv');
  const made = spawnSync('/usr/bin/python3', ['-m', 'venv', '--without-pip', '--system-site-packages', venv], { encoding: 'utf8' });
  expect(made.status, made.stderr).toBe(0);
  delete process.env.SPADE_PYTHON;
  delete process.env.SPADE_WORKBENCH_VENV; // the app's own venv would win over PATH
  process.env.PATH = `${join(venv, 'bin')}:${savedPath ?? '/usr/bin:/bin'}`;
  const found = probePython(true);
  expect(found?.path).toBe(join(venv, 'bin', 'python3'));

  const native = new NativeRuntime();
  try {
    const load = await native.open('where', { cmd: 'load', source: WHERE });
    expect(load.ok, JSON.stringify(load)).toBe(true);
    const r = await native.call('where', { cmd: 'reset' });
    expect(r.ok && (r.result as { observation: string }).observation).toBe(join(venv, 'bin', 'python3'));
  } finally {
    await native.shutdown();
  }
});
