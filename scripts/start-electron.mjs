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
  // Electron is an optional dependency: `npm install` succeeds where its binary cannot be downloaded.
  console.error(
    [
      'The Electron binary is not installed here, so the desktop app cannot open.',
      'To get it: run `node node_modules/electron/install.js` on a machine that can reach github.com',
      '(or set ELECTRON_MIRROR to a mirror you can reach, and unset ELECTRON_SKIP_BINARY_DOWNLOAD), then `npm start` again.',
      'Meanwhile `npm run serve` opens the same workbench in a browser.',
    ].join('\n'),
  );
  process.exit(1);
}
execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' });
execFileSync(process.execPath, [join(root, 'scripts', 'electron-native.mjs')], { stdio: 'inherit' });
const child = spawn(electronPath, [root, ...process.argv.slice(2)], { stdio: 'inherit' });
child.on('exit', (code) => process.exit(code ?? 0));
