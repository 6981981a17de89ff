import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { HARNESS_ERROR_KINDS, harnessReplySchema } from '../../../core/runtime/harnessMessages';
import { probePython } from '../../../core/runtime/native';
import type { RuntimeService } from '../../../core/runtime/service';
import { packageRoot } from '../../../core/base/appInfo';
import { makeRuntime } from './helpers';

/**
 * Error kinds are one enumeration on both sides (core/api/harnessError.ts, rendered into
 * native/harness_messages.py as ErrorKind), and an interpreter that dies under a call is `crashed`
 * wherever it is reported: by the Pyodide pool, by the native fork server, and by the audit's judge
 * when the game's process exits under it (which said `crash` before). Replies are parsed with the
 * contract's schema, whose `kind` is that enumeration: any other spelling fails the parse.
 */
const DYING = `import os
class DyingEnv:
    def reset(self, seed=None):
        return "ready", {}
    def step(self, action):
        if "die" in action:
            os._exit(3)
        if "spin" in action:
            while True:
                pass
        return "ok", 0.0, False, False, {}
`;

let rt: RuntimeService;
beforeAll(async () => {
  rt = makeRuntime({ stepTimeoutSec: 20 });
  await rt.pool.start();
});
afterAll(async () => {
  await rt.shutdown();
});

test('the Python side reads the same kinds as the TypeScript side', () => {
  const py = readFileSync(join(packageRoot(), 'native', 'harness_messages.py'), 'utf8');
  const line = py.split('\n').find((l) => l.startsWith('ERROR_KINDS'));
  expect(line).toBeDefined();
  const kinds = [...line!.matchAll(/"([a-z_]+)"/g)].map((m) => m[1]);
  expect(kinds).toEqual([...HARNESS_ERROR_KINDS]);
  expect(HARNESS_ERROR_KINDS).toContain('crashed');
  expect(HARNESS_ERROR_KINDS).not.toContain('crash');
});

test('Pyodide: a child killed under a call is reported as crashed', async () => {
  const opened = await rt.open({ source: DYING, runtime: 'pyodide' });
  expect(opened.ok, JSON.stringify(opened)).toBe(true);
  if (!opened.ok) return;
  const pending = rt.call(opened.sessionId, { cmd: 'step', action: 'spin' });
  // Killed once the call is in the child (the pool knows the session's worker from the load on).
  await new Promise((r) => setTimeout(r, 300));
  expect(rt.pool.killSessionWorker(opened.sessionId)).toBe(true);
  const reply = harnessReplySchema.parse(await pending);
  expect(reply.ok).toBe(false);
  if (!reply.ok) expect(reply.error.kind).toBe('crashed');
});

describe.runIf(probePython())('native CPython', () => {
  test("a game's process that exits under a step is reported as crashed", async () => {
    const opened = await rt.open({ source: DYING, runtime: 'cpython' });
    expect(opened.ok, JSON.stringify(opened)).toBe(true);
    if (!opened.ok) return;
    expect((await rt.call(opened.sessionId, { cmd: 'reset', seed: 1 })).ok).toBe(true);
    const reply = harnessReplySchema.parse(await rt.call(opened.sessionId, { cmd: 'step', action: 'die' }));
    expect(reply.ok).toBe(false);
    if (!reply.ok) expect(reply.error.kind).toBe('crashed');
  });

  test("the audit's judge reports a game that exits under it as crashed", async () => {
    const source = DYING.replace('if "die" in action', 'if action == "\\\\boxed{1}"');
    const s = await rt.native.fork('kinds-audit', 20, true, source);
    try {
      const reply = harnessReplySchema.parse(await s.request({ cmd: 'audit', source, options: { checks: ['spade.*'] } }, 60_000));
      expect(reply.ok, JSON.stringify(reply).slice(0, 400)).toBe(false);
      if (!reply.ok) expect(reply.error.kind).toBe('crashed');
    } finally {
      s.close();
    }
  });
});
