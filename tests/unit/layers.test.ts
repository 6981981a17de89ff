import { ESLint } from 'eslint';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it, onTestFinished } from 'vitest';
import { tempDir } from '../helpers/tmp';

// The layer rule must be able to fail: each case below is a real violation that `npm run lint`
// has to report, next to an allowed import that it must let through.
const eslint = new ESLint({ cwd: process.cwd() });

async function messages(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('layer lint rule', () => {
  it('refuses core importing electron, react or the renderer', async () => {
    expect(await messages('core/memory/x.ts', "import { app } from 'electron';\n")).toHaveLength(1);
    expect(await messages('core/memory/x.ts', "import React from 'react';\n")).toHaveLength(1);
    expect(await messages('core/memory/x.ts', "import { useApp } from '../../renderer/src/store/app';\n")).toHaveLength(1);
    expect(await messages('core/memory/x.ts', "import { readFileSync } from 'node:fs';\n")).toHaveLength(0);
  });

  it('refuses the renderer importing Node built-ins or core internals', async () => {
    expect(await messages('renderer/src/x.ts', "import { readFileSync } from 'node:fs';\n")).toHaveLength(1);
    expect(await messages('renderer/src/x.ts', "import fs from 'fs';\n")).toHaveLength(1);
    expect(await messages('renderer/src/x.ts', "import { openDatabase } from '../../core/memory/db';\n")).toHaveLength(1);
    expect(await messages('renderer/src/x.ts', "import Database from 'better-sqlite3';\n")).toHaveLength(1);
    expect(await messages('renderer/src/x.ts', "import { calls } from '../../core/api';\n")).toHaveLength(0);
    expect(await messages('renderer/src/x.ts', "import { createWsBackend } from '../../core/api/wsClient';\n")).toHaveLength(0);
  });

  it('keeps core/api free of Node and engine internals (the renderer loads it)', async () => {
    expect(await messages('core/api/calls/x.ts', "import { join } from 'node:path';\n")).toHaveLength(1);
    expect(await messages('core/api/calls/x.ts', "import { openDatabase } from '../../memory/db';\n")).toHaveLength(1);
    expect(await messages('core/api/calls/x.ts', "import { defineCall } from '../contract';\n")).toHaveLength(0);
  });

  it('keeps handlers off repositories, stores and the database (they delegate to services)', async () => {
    expect(await messages('core/handlers/x.ts', "import { search } from '../memory/repository';\n")).toHaveLength(1);
    expect(await messages('core/handlers/x.ts', "import { JobStore } from '../jobs/jobStore';\n")).toHaveLength(1);
    expect(await messages('core/handlers/x.ts', "import { openDatabase } from '../memory/db';\n")).toHaveLength(1);
    expect(await messages('core/handlers/x.ts', "import { app } from 'electron';\n")).toHaveLength(1); // the layer rule still applies
    expect(await messages('core/handlers/x.ts', "import type { Services } from '../services/services';\n")).toHaveLength(0);
    expect(await messages('core/memory/library.ts', "import { search } from './repository';\n")).toHaveLength(0);
    const [viaDb] = await eslint.lintText("export const h = (s: { db: unknown }) => s.db;\n", { filePath: 'core/handlers/x.ts' });
    expect(viaDb!.messages.filter((m) => m.ruleId === 'no-restricted-syntax').map((m) => m.message)).toEqual(['Handlers delegate to a service (Services): no database access here.']);
  });

  it('refuses the Electron shell importing UI code', async () => {
    expect(await messages('electron/x.ts', "import { Workbench } from '../renderer/src/components/Workbench';\n")).toHaveLength(1);
    expect(await messages('electron/x.ts', "import { Services } from '../core/services/services';\n")).toHaveLength(0);
  });
});

async function ruleMessages(filePath: string, code: string, rule: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === rule).map((m) => m.message);
}

describe('one-way lint rules', () => {
  const apiError = "import { ApiError } from '../api';\nexport function f(): never { throw new ApiError('not_found', 'x'); }\n";
  it('refuses an ApiError built outside core/api, the dispatcher and the transports', async () => {
    expect(await ruleMessages('core/memory/x.ts', apiError, 'spade/api-error-at-boundary')).toHaveLength(1);
    expect(await ruleMessages('core/handlers/x.ts', apiError, 'spade/api-error-at-boundary')).toHaveLength(1);
    expect(await ruleMessages('core/episodes/x.ts', apiError, 'spade/api-error-at-boundary')).toHaveLength(1);
    expect(await ruleMessages('electron/main.ts', apiError, 'spade/api-error-at-boundary')).toHaveLength(1);
    expect(await ruleMessages('core/api/x.ts', apiError, 'spade/api-error-at-boundary')).toHaveLength(0);
    expect(await ruleMessages('core/server/dispatcher.ts', apiError, 'spade/api-error-at-boundary')).toHaveLength(0);
    const domain = "import { DomainError } from '../errors';\nexport function f(): never { throw new DomainError('not_found', 'x'); }\n";
    expect(await ruleMessages('core/memory/x.ts', domain, 'spade/api-error-at-boundary')).toHaveLength(0);
  });

  it('refuses a plain Error thrown in the job backends, the model clients and the editor, unless marked not user-facing', async () => {
    const plain = "export function f(): never { throw new Error('sbatch refused'); }\n";
    const called = "export function f(): never { throw Error('sbatch refused'); }\n";
    const rule = 'spade/domain-error-thrown';
    expect(await ruleMessages('core/jobs/backends/x.ts', plain, rule)).toHaveLength(1);
    expect(await ruleMessages('core/models/x.ts', called, rule)).toHaveLength(1);
    expect(await ruleMessages('core/editor/x.ts', plain, rule)).toHaveLength(1);
    const domain = "import { DomainError } from '../errors';\nexport function f(): never { throw new DomainError('unavailable', 'x'); }\n";
    expect(await ruleMessages('core/jobs/x.ts', domain, rule)).toHaveLength(0);
    // The marker covers its own line and the next, no further.
    const marked = "export function f(x: boolean): void {\n  // not-user-facing: caught below and posted as a message\n  if (x) throw new Error('a');\n}\n";
    const sameLine = "export function f(x: boolean): void {\n  if (x) throw new Error('a'); // not-user-facing: a start-up guard\n}\n";
    const tooFar = "export function f(x: boolean): void {\n  // not-user-facing: caught below\n  const y = x;\n  if (y) throw new Error('a');\n}\n";
    expect(await ruleMessages('core/models/x.ts', marked, rule)).toHaveLength(0);
    expect(await ruleMessages('core/models/x.ts', sameLine, rule)).toHaveLength(0);
    expect(await ruleMessages('core/models/x.ts', tooFar, rule)).toHaveLength(1);
    // Other folders keep their internal invariants as plain Errors (logged with their stack as `internal`).
    expect(await ruleMessages('core/episodes/x.ts', plain, rule)).toHaveLength(0);
  });

  it('refuses raw SQL outside repositories, stores and migrations', async () => {
    const sql = "export const q = (db: { prepare(s: string): unknown }) => db.prepare('SELECT id FROM environments WHERE name = ?');\n";
    const tpl = 'export const q = (t: string) => `DELETE FROM ${t} WHERE id = ?`;\n';
    expect(await ruleMessages('core/handlers/x.ts', sql, 'spade/sql-in-repositories')).toHaveLength(1);
    expect(await ruleMessages('core/memory/service.ts', tpl, 'spade/sql-in-repositories')).toHaveLength(1);
    expect(await ruleMessages('core/editor/service.ts', "const s = 'INSERT OR REPLACE INTO settings (key) VALUES (?)';\n", 'spade/sql-in-repositories')).toHaveLength(1);
    expect(await ruleMessages('core/memory/repository.ts', sql, 'spade/sql-in-repositories')).toHaveLength(0);
    expect(await ruleMessages('core/jobs/jobStore.ts', tpl, 'spade/sql-in-repositories')).toHaveLength(0);
    expect(await ruleMessages('core/memory/settingsStore.ts', sql, 'spade/sql-in-repositories')).toHaveLength(0);
    // Prose that happens to use the words is not SQL.
    expect(await ruleMessages('core/handlers/x.ts', "const m = 'select all, then update the list';\n", 'spade/sql-in-repositories')).toHaveLength(0);
  });

  it('refuses a hand-written message-of-an-unknown-error next to the helper', async () => {
    const hand = 'export const m = (e: unknown) => (e instanceof Error ? e.message : String(e));\n';
    expect(await ruleMessages('core/memory/x.ts', hand, 'spade/error-message-helper')).toHaveLength(1);
    expect(await ruleMessages('electron/x.ts', hand, 'spade/error-message-helper')).toHaveLength(1);
    expect(await ruleMessages('renderer/src/x.tsx', hand, 'spade/error-message-helper')).toHaveLength(1);
    expect(await ruleMessages('core/episodes/x.ts', hand, 'spade/error-message-helper')).toHaveLength(1);
    expect(await ruleMessages('core/runtime/x.ts', hand, 'spade/error-message-helper')).toHaveLength(1);
    const behindOr = "import { isApiError } from '../api';\nexport const m = (e: unknown) => (isApiError(e) || e instanceof Error ? e.message : String(e));\n";
    expect(await ruleMessages('renderer/src/x.ts', behindOr, 'spade/error-message-helper')).toHaveLength(1);
    // Wanting the stack, or the error itself, is a different thing and stays allowed.
    const stack = 'export const m = (e: unknown) => (e instanceof Error ? (e.stack ?? e.message) : String(e));\n';
    const normalize = 'export const n = (e: unknown) => (e instanceof Error ? e : new Error(String(e)));\n';
    expect(await ruleMessages('core/runtime/x.ts', stack, 'spade/error-message-helper')).toHaveLength(0);
    expect(await ruleMessages('core/runtime/x.ts', normalize, 'spade/error-message-helper')).toHaveLength(0);
    expect(await ruleMessages('core/memory/x.ts', "import { errorMessage } from '../api';\nexport const m = (e: unknown) => errorMessage(e);\n", 'spade/error-message-helper')).toHaveLength(0);
  });
  it('refuses a hand-written try/catch around a backend call in any renderer file', async () => {
    const hand = "import { backend } from '../../store/app';\nexport async function f() {\n  try {\n    await backend().call('memory.setSeed', { ids: [1], seed: true });\n  } catch {\n    // swallowed\n  }\n}\n";
    expect(await ruleMessages('renderer/src/features/library/x.ts', hand, 'spade/call-through-hook')).toHaveLength(1);
    expect(await ruleMessages('renderer/src/features/x/y.tsx', hand, 'spade/call-through-hook')).toHaveLength(1);
    // No file is excepted any more: the ten that were (issue 35), stores, components.
    expect(await ruleMessages('renderer/src/features/episodes/useEpisode.ts', hand, 'spade/call-through-hook')).toHaveLength(1);
    expect(await ruleMessages('renderer/src/features/runtime/RuntimeStatusItem.tsx', hand, 'spade/call-through-hook')).toHaveLength(1);
    expect(await ruleMessages('renderer/src/store/app.ts', hand, 'spade/call-through-hook')).toHaveLength(1);
    expect(await ruleMessages('renderer/src/components/PathField.tsx', hand, 'spade/call-through-hook')).toHaveLength(1);
    // A .catch() (or a .then with a failure handler) chained on a call is the same second way.
    const chained = "import { backend } from '../../store/app';\nexport const f = () => backend().call('memory.get', { id: 1 }).then((e) => e.name).catch(() => null);\n";
    const thenFail = "import { backend } from '../../store/app';\nexport const f = () => backend().call('memory.get', { id: 1 }).then((e) => e.name, () => null);\n";
    const thenOnly = "import { backend } from '../../store/app';\nexport const f = () => backend().call('memory.get', { id: 1 }).then((e) => e.name);\n";
    expect(await ruleMessages('renderer/src/features/runs/x.ts', chained, 'spade/call-through-hook')).toHaveLength(1);
    expect(await ruleMessages('renderer/src/features/runs/x.ts', thenFail, 'spade/call-through-hook')).toHaveLength(1);
    expect(await ruleMessages('renderer/src/features/runs/x.ts', thenOnly, 'spade/call-through-hook')).toHaveLength(0);
    // Through the one path, or a try/catch around no call (parsing), or one around a callback it only defines: allowed.
    const through = "import { backend } from '../../store/app';\nimport { attempt } from '../../store/report';\nexport const f = () => attempt('library', 'Seed', () => backend().call('memory.setSeed', { ids: [1], seed: true }));\n";
    const parse = 'export function f(t: string) {\n  try {\n    return JSON.parse(t) as unknown;\n  } catch {\n    return null;\n  }\n}\n';
    expect(await ruleMessages('renderer/src/features/library/x.ts', through, 'spade/call-through-hook')).toHaveLength(0);
    expect(await ruleMessages('renderer/src/features/library/x.ts', parse, 'spade/call-through-hook')).toHaveLength(0);
    // The store's own helpers are where the one catch lives.
    expect(await ruleMessages('renderer/src/store/report.ts', hand, 'spade/call-through-hook')).toHaveLength(0);
  });
});

// The layers inside core/ (issue 45): scripts/coreLayers.mjs names what each folder may import.
type CoreLayers = {
  coreLayers: Record<string, string[]>;
  pendingImports: Record<string, string[]>;
  coreFolderOf(coreDir: string, file: string): string | null;
};
const layersModule = (): Promise<CoreLayers> => import(pathToFileURL(resolve('scripts/coreLayers.mjs')).href) as Promise<CoreLayers>;
const layer = (filePath: string, code: string) => ruleMessages(filePath, code, 'spade/core-layers');

describe('core layer rule', () => {
  it('refuses a folder importing a layer above it, in every import form, and lets the layers below through', async () => {
    // The edges issue 45 removed: each is an error now.
    expect(await layer('core/runtime/x.ts', "import type { AuditOptions } from '../audit/types';\n")).toHaveLength(1);
    expect(await layer('core/runtime/x.ts', "import { packageRoot } from '../services/appInfo';\n")).toHaveLength(1);
    expect(await layer('core/memory/x.ts', "import { RunStore } from '../runs/runStore';\n")).toHaveLength(1);
    expect(await layer('core/models/x.ts', "import { modelPlayer } from '../episodes/agent';\n")).toHaveLength(1);
    expect(await layer('core/openenv/x.ts', "import { isLoopback } from '../host/webHost';\n")).toHaveLength(1);
    expect(await layer('core/jobs/backends/x.ts', "import { Services } from '../../services/services';\n")).toHaveLength(1);
    // Re-exports, dynamic imports and type imports tie folders together too.
    expect(await layer('core/memory/x.ts', "export { RunStore } from '../runs/runStore';\n")).toHaveLength(1);
    expect(await layer('core/memory/x.ts', "export * from '../runs/runStore';\n")).toHaveLength(1);
    expect(await layer('core/memory/x.ts', "export const f = () => import('../runs/runStore');\n")).toHaveLength(1);
    expect(await layer('core/memory/x.ts', "export type T = import('../runs/runStore').RunEnvRecord;\n")).toHaveLength(1);
    // base takes nothing of the engine.
    expect(await layer('core/base/x.ts', "import type { Db } from '../memory/db';\n")).toHaveLength(1);
    expect(await layer('core/base/x.ts', "import type { ErrorCode } from '../api/errors';\n")).toHaveLength(0);
    // Downward, sideways within a folder, packages and the root's errors.ts: allowed.
    expect(await layer('core/runtime/x.ts', "import { packageRoot } from '../base/appInfo';\n")).toHaveLength(0);
    expect(await layer('core/runtime/x.ts', "import { DomainError } from '../errors';\n")).toHaveLength(0);
    expect(await layer('core/runtime/x.ts', "import type { AuditOptions } from './auditOptions';\n")).toHaveLength(0);
    expect(await layer('core/memory/x.ts', "import { readFileSync } from 'node:fs';\n")).toHaveLength(0);
    expect(await layer('core/runs/x.ts', "import { modelPlayer } from '../episodes/agent';\n")).toHaveLength(0);
    expect(await layer('core/services/x.ts', "import { RunService } from '../runs/service';\n")).toHaveLength(0);
    // The composition roots sit on top: nothing below imports them, and `../api` is the api folder.
    expect(await layer('core/audit/x.ts', "import { startApp } from '../host/startApp';\n")).toHaveLength(1);
    expect(await layer('core/services/x.ts', "import { handlers } from '../handlers';\n")).toHaveLength(1);
    expect(await layer('core/host/x.ts', "import { handlers } from '../handlers';\n")).toHaveLength(0);
    expect(await layer('core/episodes/x.ts', "import { errorMessage } from '../api';\n")).toHaveLength(0);
    const [msg] = await layer('core/memory/x.ts', "import { RunStore } from '../runs/runStore';\n");
    expect(msg).toContain('core/memory may not import core/runs');
  });

  it('knows core/sweeps before it exists: jobs below it, audit, episodes and design above', async () => {
    expect(await layer('core/sweeps/x.ts', "import type { SshTarget } from '../jobs/types';\n")).toHaveLength(0);
    expect(await layer('core/sweeps/x.ts', "import { openDatabase } from '../memory/db';\n")).toHaveLength(0);
    expect(await layer('core/sweeps/x.ts', "import type { Player } from '../episodes/regret';\n")).toHaveLength(1);
    expect(await layer('core/sweeps/x.ts', "import type { AuditOptions } from '../audit/types';\n")).toHaveLength(1);
    for (const user of ['audit', 'episodes', 'design']) {
      expect(await layer(`core/${user}/x.ts`, "import { driveSweep } from '../sweeps/sweep';\n")).toHaveLength(0);
    }
  });

  it('refuses a folder that has no row in the table', async () => {
    const [msg, ...rest] = await layer('core/newthing/x.ts', "import { DomainError } from '../errors';\n");
    expect(rest).toHaveLength(0);
    expect(msg).toContain('core/newthing has no row in the layer table');
  });

  it('refuses episodes reaching up to runs, and keeps no pending entry whose import is gone', async () => {
    // The regret sweep once held core/runs' RunService from core/episodes; it now lives in core/runs.
    const up = "import type { RunService } from '../runs/service';\n";
    expect(await layer('core/episodes/regretSweep.ts', up)).toHaveLength(1);
    expect(await layer('core/episodes/regretReport.ts', up)).toHaveLength(1);
    expect(await layer('core/runs/regretSweep.ts', up)).toHaveLength(0);
    // Each pending entry is still used: when its import goes, the entry must go too.
    const { pendingImports, coreFolderOf } = await layersModule();
    const coreDir = resolve('core');
    for (const [file, folders] of Object.entries(pendingImports)) {
      const refs = ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles;
      const reached = new Set(refs.filter((r) => r.fileName.startsWith('.')).map((r) => coreFolderOf(coreDir, resolve(dirname(resolve(file)), r.fileName))));
      for (const f of folders) expect(reached.has(f), `${file} no longer imports core/${f}: delete it from pendingImports`).toBe(true);
    }
  });

  it('has a row for every folder of core/, and no row names a layer after its own (so the table has no cycle)', async () => {
    const { coreLayers } = await layersModule();
    const order = Object.keys(coreLayers);
    for (const name of readdirSync('core')) {
      if (statSync(join('core', name)).isDirectory()) expect(order, `core/${name}`).toContain(name);
    }
    order.forEach((folder, i) => {
      for (const dep of coreLayers[folder]!) expect(order.indexOf(dep), `${folder} -> ${dep}`).toBeLessThan(i);
    });
  });
});

describe('core/ folder cycle scan', () => {
  const scan = (root: string) => spawnSync(process.execPath, ['scripts/core-cycles.mjs', '--root', root], { encoding: 'utf8' });
  const tree = (root: string, files: Record<string, string>) => {
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, 'core', rel)), { recursive: true });
      writeFileSync(join(root, 'core', rel), text);
    }
  };

  it('exits 1 and names the folders of a cycle, including one through a folder index', () => {
    const tmp = tempDir();
    onTestFinished(() => tmp.cleanup());
    tree(tmp.dir, {
      'errors.ts': 'export class DomainError extends Error {}\n',
      'a/x.ts': "import { y } from '../b/y';\nimport { DomainError } from '../errors';\nexport const x = y;\n",
      // `../a` is core/a/index.ts: the folder a, not a file of core/ itself.
      'b/y.ts': "import type { Z } from '../a';\nexport const y = 1 as unknown as Z;\n",
      'a/index.ts': 'export type Z = number;\n',
      'c/z.ts': "// import { x } from '../a/x' is only a comment\nexport const s = \"import '../a/x'\";\n",
    });
    const r = scan(tmp.dir);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stdout).toContain('folder cycles: 1');
    expect(r.stdout).toContain('cycle: a <-> b');
    // Comments and strings that look like imports are not edges.
    const json = spawnSync(process.execPath, ['scripts/core-cycles.mjs', '--root', tmp.dir, '--json'], { encoding: 'utf8' });
    expect(json.status).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({ edges: { a: ['.', 'b'], b: ['a'] }, cycles: [['a', 'b']] });
  });

  it('exits 0 on a tree whose folders only import downwards', () => {
    const tmp = tempDir();
    onTestFinished(() => tmp.cleanup());
    tree(tmp.dir, {
      'errors.ts': 'export class DomainError extends Error {}\n',
      'a/x.ts': "import { y } from '../b/y';\nexport const x = y;\n",
      'b/y.ts': "import { DomainError } from '../errors';\nexport const y = new DomainError();\n",
    });
    const r = scan(tmp.dir);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('folder cycles: 0');
    const json = spawnSync(process.execPath, ['scripts/core-cycles.mjs', '--root', tmp.dir, '--json'], { encoding: 'utf8' });
    expect(JSON.parse(json.stdout)).toEqual({ edges: { a: ['b'], b: ['.'] }, cycles: [] });
  });

  it("finds no cycle between the folders of this repository's core/", () => {
    const r = spawnSync(process.execPath, ['scripts/core-cycles.mjs'], { encoding: 'utf8' });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('folder cycles: 0');
  });
});
