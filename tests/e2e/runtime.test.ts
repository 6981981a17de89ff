import { afterAll, beforeAll, expect, test } from 'vitest';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';
import { ensureChildBuilt } from '../integration/runtime/helpers';

let ctx: E2EContext;
beforeAll(async () => {
  ensureChildBuilt();
  ctx = await openWorkbench();
});
afterAll(async () => {
  await ctx?.close();
});

test('the status bar shows the interpreter pool, and native sessions as less isolated', async () => {
  const { page, app } = ctx;
  await page.waitForSelector('[data-testid=runtime-status]:has-text("Pyodide: idle")');
  const rt = app.services.runtime;
  const py = await rt.open({ source: 'class AEnv:\n    def reset(self, seed=None):\n        return "o", {}\n    def step(self, a):\n        return "o", 0.0, True, False, {}\n', runtime: 'pyodide' });
  expect(py.ok).toBe(true);
  await page.waitForSelector('[data-testid=runtime-status]:has-text("ready")', { timeout: 20_000 });
  const native = await rt.open({ source: 'class BEnv:\n    def reset(self, seed=None):\n        return "o", {}\n    def step(self, a):\n        return "o", 0.0, True, False, {}\n', runtime: 'cpython' });
  if (native.ok) await page.waitForSelector('[data-testid=runtime-native-warning]:has-text("less isolated")', { timeout: 10_000 });
  const title = await page.getAttribute('[data-testid=runtime-status]', 'title');
  expect(title).toContain('LESS ISOLATED');
  await screenshot(page, 'runtime-status');
  expect(ctx.errors).toEqual([]);
});
