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

  it('refuses the Electron shell importing UI code', async () => {
    expect(await messages('electron/x.ts', "import { Workbench } from '../renderer/src/components/Workbench';\n")).toHaveLength(1);
    expect(await messages('electron/x.ts', "import { Services } from '../core/services/services';\n")).toHaveLength(0);
  });
});
