#!/usr/bin/env node
// Builds better-sqlite3 for Electron's ABI into build/electron-native/, leaving node_modules on the
// Node build that the tests and the CLI use. The desktop main process points better-sqlite3's
// `nativeBinding` option at the result. Needs the network once (Electron's headers).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync, readFileSync, copyFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const electronVersion = JSON.parse(readFileSync(require.resolve('electron/package.json'), 'utf8')).version;
const outDir = join(root, 'build', 'electron-native');
const out = join(outDir, 'better_sqlite3.node');
const stamp = join(outDir, `electron-${electronVersion}`);
if (existsSync(out) && existsSync(stamp)) process.exit(0);

const src = join(outDir, 'src');
rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });
cpSync(dirname(require.resolve('better-sqlite3/package.json')), src, {
  recursive: true,
  filter: (p) => !p.includes(`${join('better-sqlite3', 'build')}`),
});
const gyp = process.env.npm_config_node_gyp || join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
console.log(`Building better-sqlite3 for Electron ${electronVersion} (once) ...`);
execFileSync(process.execPath, [gyp, 'rebuild', '--release', `--target=${electronVersion}`, '--runtime=electron', '--dist-url=https://electronjs.org/headers'], {
  cwd: src,
  stdio: 'inherit',
});
copyFileSync(join(src, 'build', 'Release', 'better_sqlite3.node'), out);
copyFileSync(out, stamp);
