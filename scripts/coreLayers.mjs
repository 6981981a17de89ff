// The layers inside core/ (issue 45), VS Code style: each top-level folder of core/ names the folders it
// may import; anything else is an error of `npx eslint .` (rule spade/core-layers in eslint.config.js,
// proven to fire by tests/unit/layers.test.ts). A folder may always import itself. The files directly in
// core/ (errors.ts: DomainError) form the folder ".". A new folder needs a row here before it lints.
//
// Read from the bottom layer up: a folder lists only folders that come before it here, so the table has no
// cycle (tests/unit/layers.test.ts checks that too) and scripts/core-cycles.mjs finds none on main.
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';

const contract = ['api', '.', 'base'];
const engine = [...contract, 'server', 'runtime', 'memory', 'jobs', 'sweeps', 'models', 'episodes', 'runs', 'audit', 'editor', 'openenv', 'design', 'train'];

export const coreLayers = {
  // The contract the renderer loads (types, schemas, the client): nothing of the engine.
  api: [],
  // core/errors.ts: DomainError and its codes.
  '.': ['api'],
  // Small utilities every layer uses: the package root, the data dir, bind rules, redaction.
  base: ['api', '.'],
  // The event bus and the call dispatcher.
  server: contract,
  // Python processes: the harness, its protocol, the sandboxes.
  runtime: contract,
  // SQLite: the library, its migrations, stores every feature reads.
  memory: [...contract, 'server', 'runtime'],
  // Remote and local jobs (SSH, Slurm, Ray).
  jobs: [...contract, 'server', 'runtime', 'memory'],
  // Sweeps over a pool (targets, executors, store, owners); audit, regret and design plug into it.
  // The sweep layer: targets, executors, store, owners; audits and regret sweeps plug in as kinds.
  sweeps: [...contract, 'server', 'runtime', 'memory', 'jobs'],
  // The model client and the reading of its replies (SPADE's action and tool-call syntax).
  models: contract,
  // Episodes, the agent that plays them, regret.
  episodes: [...contract, 'server', 'runtime', 'memory', 'models', 'sweeps'],
  // Model runs as records, the service that plays them, and regret sweeps (a run played as a sweep).
  runs: [...contract, 'server', 'runtime', 'memory', 'models', 'episodes', 'sweeps'],
  // Audits of environments.
  audit: [...contract, 'server', 'runtime', 'memory', 'jobs', 'sweeps', 'episodes'],
  editor: [...contract, 'server', 'runtime', 'memory', 'audit'],
  openenv: [...contract, 'server', 'runtime', 'memory', 'models', 'episodes', 'runs', 'audit'],
  design: [...contract, 'server', 'runtime', 'memory', 'jobs', 'sweeps', 'models', 'episodes', 'runs', 'audit'],
  // The local GRPO run: its trainer's settings, and the evaluation of base and checkpoint as model runs.
  train: [...contract, 'runtime', 'memory', 'models', 'episodes', 'runs'],
  // Composition roots: they wire the layers above together, and nothing below imports them.
  services: engine,
  handlers: [...engine, 'services'],
  host: [...engine, 'services', 'handlers'],
  cli: [...engine, 'services', 'handlers', 'host'],
};

// Imports the table forbids, each named with its file, while a move is under way (none today: the
// regret sweep moved to core/runs, which may import episodes and sweeps). Delete an entry when its import is gone.
export const pendingImports = {};

/** The top-level folder of core/ that `file` (absolute) lies in, "." for core/'s own files, null outside core/. */
export function coreFolderOf(coreDir, file) {
  const rel = path.relative(coreDir, file);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return null;
  const parts = rel.split(path.sep);
  if (parts.length > 1) return parts[0];
  // `../api` names the folder (its index.ts), `../errors` the file core/errors.ts.
  const full = path.join(coreDir, parts[0]);
  return existsSync(full) && statSync(full).isDirectory() ? parts[0] : '.';
}

/**
 * Why `fromFile` may not import `spec` (a relative specifier), or null when it may. Both are judged by
 * the folders of core/ they lie in; imports of packages and of files outside core/ are other rules'.
 */
export function layerViolation(coreDir, fromFile, spec) {
  if (!spec.startsWith('.')) return null;
  const from = coreFolderOf(coreDir, fromFile);
  if (from === null) return null;
  const to = coreFolderOf(coreDir, path.resolve(path.dirname(fromFile), spec));
  if (to === null || to === from) return null;
  const allowed = coreLayers[from];
  if (!allowed) return { kind: 'unknown', from, to };
  if (allowed.includes(to)) return null;
  const relFile = path.relative(path.dirname(coreDir), fromFile).split(path.sep).join('/');
  if (pendingImports[relFile]?.includes(to)) return null;
  return { kind: 'up', from, to, allowed: allowed.length ? allowed.join(', ') : 'nothing' };
}
