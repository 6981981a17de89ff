import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/** The repository (or packaged app) root: two levels above this file in source and in dist. */
export function packageRoot(): string {
  if (process.env.SPADE_APP_ROOT) return process.env.SPADE_APP_ROOT;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string };
      if (pkg.name === 'spade-workbench') return dir;
    } catch {
      // keep walking up
    }
    dir = dirname(dir);
  }
  throw new Error('Cannot find the spade-workbench package root');
}

let cachedVersion: string | undefined;
export function appVersion(): string {
  if (!cachedVersion) {
    const pkg = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string };
    cachedVersion = pkg.version;
  }
  return cachedVersion;
}

/**
 * Where files that a child process, Python or a copy must read live. In a packaged desktop app the
 * code sits in app.asar, which only Electron's own fs can read; electron-builder.json unpacks those
 * folders (asarUnpack) into app.asar.unpacked beside it. Elsewhere this is the package root.
 */
export function unpackedRoot(): string {
  return packageRoot().replace(/app\.asar$/, 'app.asar.unpacked');
}
