import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';

// The page against the app's own shape: the engine in its worker thread (core/host/engineProcess.ts),
// the web host on this thread. The other e2e files run the same messages on one thread so that they
// can read the engine's services; this one reads nothing but the page.
beforeAll(() => {
  if (!existsSync(join(process.cwd(), 'dist', 'renderer', 'index.html'))) execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
});

const count = async (ctx: E2EContext): Promise<number> => Number((await ctx.page.textContent('[data-testid=library-count]'))!.replace(/[^\d]/g, ''));

for (const viewport of [{ width: 1440, height: 900 }, { width: 1024, height: 768 }]) {
  describe(`the workbench on an engine in a worker thread (Chromium, ${viewport.width} px)`, () => {
    let ctx: E2EContext;
    beforeAll(async () => {
      ctx = await openWorkbench({ engine: 'worker', viewport });
    });
    afterAll(async () => {
      await ctx?.close();
    });

    it('fills the library from the worker, searches through it, and works again after the engine died', async () => {
      const { page } = ctx;
      expect(ctx.app.engine.mode).toBe('worker');
      // The seed pack is imported by the worker after the page is up: its events reach the page.
      await page.waitForFunction(() => Number(document.querySelector('[data-testid=library-count]')?.textContent?.replace(/[^\d]/g, '')) >= 14);
      await page.fill('[data-testid=library-search]', 'invent');
      await page.waitForFunction(() => document.querySelector('[data-testid=library-count]')?.textContent?.startsWith('1 environment'));
      const before = ctx.errors.length;

      await ctx.app.engine.kill();
      await expect.poll(() => ctx.app.engine.state(), { timeout: 60_000 }).toBe('running');
      expect(ctx.app.engine.restarts).toBe(1);
      // The page never lost its socket: the same page asks the new engine, which reopened the library.
      await page.fill('[data-testid=library-search]', '');
      await page.waitForFunction(() => Number(document.querySelector('[data-testid=library-count]')?.textContent?.replace(/[^\d]/g, '')) >= 14);
      expect(await count(ctx)).toBeGreaterThanOrEqual(14);
      expect(await page.textContent('[data-testid=backend-status]')).toContain('connected');
      await page.click('[data-testid=library-row] >> nth=0');
      await page.waitForSelector('[data-testid=environment-view] [data-testid=code-editor][data-ready=true]');
      await screenshot(page, `engine-worker-after-restart-${viewport.width}`);
      expect(ctx.errors.slice(before)).toEqual([]);
    });
  });
}
