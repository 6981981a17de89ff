import { appendFileSync, chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { probePython, probePythonAsync } from '../../../core/runtime/native';
import { tempDir } from '../../helpers/tmp';

/**
 * The CLI keeps the interpreter probe's answer in its data dir (a Python start and a numpy import
 * per play, otherwise). The answer must be the probe's own, and it must not outlive a change to
 * the interpreter or to its packages.
 */
const tmp = tempDir('spade-probe-cache-');
const saved = process.env.SPADE_PYTHON;
afterAll(() => {
  if (saved === undefined) delete process.env.SPADE_PYTHON;
  else process.env.SPADE_PYTHON = saved;
  probePython(true);
  tmp.cleanup();
});

const real = probePython(true);

test.runIf(real)('a cached probe answers as the probe does, and a changed interpreter or package directory is probed again', async () => {
  // An interpreter that counts its starts: a wrapper around the real one, with a package directory
  // of this test's own on its path (the shared interpreter's own directories are left alone).
  const counter = join(tmp.dir, 'starts');
  writeFileSync(counter, '');
  const packages = join(tmp.dir, 'packages');
  mkdirSync(packages);
  const wrapper = join(tmp.dir, 'python-wrapper');
  writeFileSync(wrapper, `#!/bin/sh\necho x >> ${counter}\nPYTHONPATH=${packages} exec ${real!.path} "$@"\n`);
  chmodSync(wrapper, 0o755);
  process.env.SPADE_PYTHON = wrapper;
  const starts = () => readFileSync(counter, 'utf8').split('\n').filter(Boolean).length;
  const cache = join(tmp.dir, 'data', 'cache', 'python-probe.json');

  const probed = probePython(true);
  expect(probed).not.toBeNull();
  const first = await probePythonAsync(cache, true);
  expect(first).toEqual(probed);
  expect(starts()).toBe(2);

  // Read back: the same answer, no interpreter started.
  expect(await probePythonAsync(cache, true)).toEqual(probed);
  expect(starts()).toBe(2);

  // A package installed or removed changes its directory: probed again.
  expect(probed!.dirs).toContain(packages);
  writeFileSync(join(packages, 'newpkg.py'), '');
  expect(await probePythonAsync(cache, true)).toEqual(probed);
  expect(starts()).toBe(3);
  expect(await probePythonAsync(cache, true)).toEqual(probed);
  expect(starts()).toBe(3);

  // The interpreter itself changed: probed again.
  appendFileSync(wrapper, '# edited\n');
  expect(await probePythonAsync(cache, true)).toEqual(probed);
  expect(starts()).toBe(4);

  // A damaged cache file is no answer: the probe runs and the file is written anew.
  writeFileSync(cache, '{not json');
  expect(await probePythonAsync(cache, true)).toEqual(probed);
  expect(starts()).toBe(5);
  expect(await probePythonAsync(cache, true)).toEqual(probed);
  expect(starts()).toBe(5);
});
