import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

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
    expect(await messages('core/handlers/x.ts', "import { JobStore } from '../jobs/store';\n")).toHaveLength(1);
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
    expect(await ruleMessages('core/jobs/store.ts', tpl, 'spade/sql-in-repositories')).toHaveLength(0);
    expect(await ruleMessages('core/services/settingsStore.ts', sql, 'spade/sql-in-repositories')).toHaveLength(0);
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
