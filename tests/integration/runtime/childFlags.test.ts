import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { childNodeFlags } from '../../../core/runtime/pyodidePool';
import { runtimePaths } from '../../../core/runtime/paths';
import { tempDir } from '../../helpers/tmp';

/**
 * The process layer under Pyodide, tested on its own: a script run with exactly the flags the pool
 * gives its children tries what a JS object leaking into Python could lead to.
 */
const tmp = tempDir('spade-child-flags-');
afterAll(() => tmp.cleanup());

test('the child process cannot compile code from strings, read or write host files, or start processes', () => {
  const script = join(tmp.dir, 'probe.mjs');
  writeFileSync(
    script,
    `
import { readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
const out = {};
const attempt = (name, fn) => { try { out[name] = 'ALLOWED: ' + String(fn()).slice(0, 40); } catch (e) { out[name] = 'denied: ' + (e.code || e.name); } };
attempt('function', () => new Function('return 1')());
attempt('eval', () => eval('1 + 1'));
attempt('read', () => readFileSync('/etc/passwd', 'utf8'));
attempt('write', () => writeFileSync(${JSON.stringify(join(tmp.dir, 'written'))}, 'x'));
attempt('spawn', () => spawnSync('true').status);
attempt('env', () => process.env.SPADE_FLAGS_SECRET ?? 'absent');
process.stdout.write(JSON.stringify(out));
`,
  );
  const p = runtimePaths();
  const r = spawnSync(process.execPath, [...childNodeFlags(p), `--allow-fs-read=${script}`, script], { encoding: 'utf8', env: {} });
  expect(r.status, r.stderr).toBe(0);
  const out = JSON.parse(r.stdout) as Record<string, string>;
  expect(out.function).toMatch(/^denied: EvalError/);
  expect(out.eval).toMatch(/^denied: EvalError/);
  expect(out.read).toBe('denied: ERR_ACCESS_DENIED');
  expect(out.write).toBe('denied: ERR_ACCESS_DENIED');
  expect(out.spawn).toBe('denied: ERR_ACCESS_DENIED');
  expect(out.env).toBe('ALLOWED: absent');
});
