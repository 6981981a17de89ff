#!/usr/bin/env node
// Thin launcher: the CLI itself is TypeScript, built into dist/ by `npm install` (prepare).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'node', 'cli.js');
if (!existsSync(cli)) {
  console.error('spade-workbench is not built yet: run `npm run build` in the checkout first.');
  process.exit(2);
}
const { main } = await import(pathToFileURL(cli).href);
process.exitCode = await main(process.argv.slice(2));
