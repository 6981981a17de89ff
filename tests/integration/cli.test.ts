import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/tmp';

// The CLI as a user runs it: the bin script over the built dist/ (npm test builds first).
const bin = join(process.cwd(), 'bin', 'spade-workbench.mjs');

function run(args: string[]) {
  return spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 60_000 });
}

describe('spade-workbench CLI', () => {
  it('lists its commands with --help', () => {
    const r = run(['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Usage: spade-workbench <command>');
    expect(r.stdout).toMatch(/^\s+serve\s+/m);
  });

  it('answers --help without loading SQLite, Pyodide, SSH or the web host', () => {
    const tmp = tempDir();
    const record = join(tmp.dir, 'imports.txt');
    const hook = join(process.cwd(), 'tests', 'helpers', 'recordImports.mjs');
    const r = spawnSync(process.execPath, ['--import', hook, bin, '--help'], { encoding: 'utf8', env: { ...process.env, SPADE_RECORD_IMPORTS: record } });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^\s+replay\s+/m);
    const loaded = readFileSync(record, 'utf8').split('\n');
    // The recorder works: the CLI itself was resolved.
    expect(loaded.some((l) => l.endsWith('cli.js'))).toBe(true);
    for (const heavy of ['better-sqlite3', 'pyodide', 'ssh2', 'ws', 'zod']) expect(loaded, heavy).not.toContain(heavy);
    // A command's own --help is answered from the catalog too.
    const sub = spawnSync(process.execPath, ['--import', hook, bin, 'replay', '--help'], { encoding: 'utf8', env: { ...process.env, SPADE_RECORD_IMPORTS: record } });
    expect(sub.stdout).toContain('--data-dir DIR');
    expect(readFileSync(record, 'utf8').split('\n')).not.toContain('better-sqlite3');
    tmp.cleanup();
  });

  it('keeps the runtime child one file (its permission model lets it read only its own script)', () => {
    const child = readFileSync(join(process.cwd(), 'dist', 'node', 'runtime-child.js'), 'utf8');
    expect(child).not.toMatch(/from\s*["']\.\/[^"']+\.js["']/);
    expect(child).not.toMatch(/import\(["']\.\//);
  });

  it('stops quietly when the reader of its output goes away (piped to head)', async () => {
    const child = spawn(process.execPath, [bin, '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let err = '';
    child.stderr.on('data', (d) => (err += String(d)));
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    expect(err).toBe('');
    expect(code).toBe(0);
  });

  it('explains unknown commands and bad options with exit status 2', () => {
    const unknown = run(['frobnicate']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('Unknown command: frobnicate');
    const badPort = run(['serve', '--port', 'abc']);
    expect(badPort.status).toBe(2);
    expect(badPort.stderr).toContain('--port');
    const badFlag = run(['serve', '--nope']);
    expect(badFlag.status).toBe(2);
  });

  it('serves the workbench, prints the URL, and stops cleanly on SIGINT', async () => {
    const tmp = tempDir();
    const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--data-dir', tmp.dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        out += String(d);
        const m = out.match(/serving at (http:\/\/127\.0\.0\.1:\d+\/)/);
        if (m) resolve(m[1]!);
      });
      child.on('exit', () => reject(new Error(`exited early: ${out}`)));
    });
    const res = await fetch(`${url}api/call/app.info`, { method: 'POST', body: '{}' });
    const body = (await res.json()) as { value: { dataDir: string } };
    expect(body.value.dataDir).toBe(tmp.dir);
    const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    child.kill('SIGINT');
    expect(await exit).toBe(0);
    tmp.cleanup();
  });
});
