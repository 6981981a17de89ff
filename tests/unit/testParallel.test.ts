/**
 * scripts/test-parallel.mjs names every failed test in its last lines, from vitest's own JSON report:
 * CI keeps only the tail of the log, and a failure printed early by one side was lost under the other's
 * lines. Here vitest itself runs a file with one failing and one passing test, and its report is read.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

type Failures = (text: string) => { file: string; test: string; message: string }[];

it('reads the failed tests, and only those, from the report vitest writes', { timeout: 60_000 }, async () => {
  // Inside the repository, so that the file's `vitest` import resolves to our node_modules.
  const dir = resolve('scratch', `test-parallel-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  try {
    writeFileSync(join(dir, 'vitest.config.mjs'), 'export default {};\n');
    writeFileSync(join(dir, 'two.test.mjs'), [
      "import { describe, expect, it } from 'vitest';",
      "describe('outer', () => {",
      "  it('passes', () => expect(1).toBe(1));",
      "  it('fails on purpose', () => expect('left').toBe('right'));",
      '});',
    ].join('\n'));
    const report = join(dir, 'report.json');
    const run = await promisify(execFile)('npx', ['vitest', 'run', '--root', dir, '--reporter=json', `--outputFile.json=${report}`], { cwd: dir }).then(
      () => 0, (e: { code?: number }) => e.code ?? -1);
    expect(run).toBe(1);
    const { failuresOf } = await import(pathToFileURL(resolve('scripts/vitest-failures.mjs')).href) as { failuresOf: Failures };
    const failures = failuresOf(readFileSync(report, 'utf8'));
    expect(failures.map((f) => [f.file.endsWith('two.test.mjs'), f.test])).toEqual([[true, 'outer fails on purpose']]);
    expect(failures[0]!.message).toContain("expected 'left' to be 'right'");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
