#!/usr/bin/env node
// `npm start`: build, make the Electron build of the native module, open the desktop app.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

let electronPath;
try {
  electronPath = require('electron');
} catch {
  electronPath = undefined;
}
if (typeof electronPath !== 'string' || !existsSync(electronPath)) {
  console.error('The Electron binary is not installed here (ELECTRON_SKIP_BINARY_DOWNLOAD or no network), so the desktop app cannot open: run `npm run serve` and use the workbench in a browser instead.');
  process.exit(1);
}
execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' });
execFileSync(process.execPath, [join(root, 'scripts', 'electron-native.mjs')], { stdio: 'inherit' });
const child = spawn(electronPath, [root, ...process.argv.slice(2)], { stdio: 'inherit' });
child.on('exit', (code) => process.exit(code ?? 0));
