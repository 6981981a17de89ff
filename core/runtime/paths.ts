import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { unpackedRoot } from '../base/appInfo';

/** Where the runtime's files live on disk: nothing is fetched, everything ships with the app. */
export interface RuntimePaths {
  root: string;
  nativeDir: string;
  pyodideDir: string;
  childScript: string;
  /** math_verify's pure-Python wheels for Pyodide, fetched at build time (may be absent in a dev tree). */
  wheelsDir: string;
}

export function runtimePaths(root = unpackedRoot()): RuntimePaths {
  return {
    root,
    nativeDir: join(root, 'native'),
    pyodideDir: join(root, 'node_modules', 'pyodide'),
    childScript: join(root, 'dist', 'node', 'runtime-child.js'),
    wheelsDir: join(root, 'resources', 'pyodide-wheels'),
  };
}

/** The native host (cpython_main.py and its host_*.py modules) never goes into a Pyodide interpreter. */
const hostOnly = (name: string): boolean => name === 'cpython_main.py' || name.startsWith('host_');

/** The harness, the sandbox guard and every extension module (a .py with `install(h, harness)`). */
export function readHarness(p: RuntimePaths): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of readdirSync(p.nativeDir).sort()) {
    if (!/^[a-z_][a-z0-9_]*\.py$/.test(name) || hostOnly(name)) continue;
    files[name] = readFileSync(join(p.nativeDir, name), 'utf8');
  }
  if (!files['harness.py'] || !files['sandbox.py']) throw new Error(`harness.py or sandbox.py missing in ${p.nativeDir}`);
  return files;
}

/** Whether the Pyodide interpreters get math_verify (and sympy) from the vendored wheels. */
export function wheelsPresent(p: RuntimePaths = runtimePaths()): boolean {
  return existsSync(p.wheelsDir) && readdirSync(p.wheelsDir).some((f) => f.startsWith('math_verify'));
}

export function childBuilt(p: RuntimePaths): boolean {
  return existsSync(p.childScript);
}
