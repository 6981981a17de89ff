import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../services/appInfo';

/** Where the runtime's files live on disk: nothing is fetched, everything ships with the app. */
export interface RuntimePaths {
  root: string;
  nativeDir: string;
  pyodideDir: string;
  childScript: string;
}

export function runtimePaths(root = packageRoot()): RuntimePaths {
  return {
    root,
    nativeDir: join(root, 'native'),
    pyodideDir: join(root, 'node_modules', 'pyodide'),
    childScript: join(root, 'dist', 'node', 'runtime-child.js'),
  };
}

export function readHarness(p: RuntimePaths): { harness: string; sandbox: string } {
  return {
    harness: readFileSync(join(p.nativeDir, 'harness.py'), 'utf8'),
    sandbox: readFileSync(join(p.nativeDir, 'sandbox.py'), 'utf8'),
  };
}

export function childBuilt(p: RuntimePaths): boolean {
  return existsSync(p.childScript);
}
