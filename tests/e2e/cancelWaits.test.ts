import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';
import { ensureChildBuilt } from '../integration/runtime/helpers';
import { engineIdle as waitEngineIdle, episodeCount as countEpisodes, pickEnv } from '../helpers/cancelWaits';

/**
 * Every wait over a second shows progress and has a Cancel that stops the work in the engine.
 * The game here never finishes loading (its constructor spins), so the open is still waiting
 * whenever Cancel is pressed: during Pyodide's cold start (the first open) or inside the load.
 */
const HANG = `class SpinForeverEnv:
    def __init__(self, max_turns=30):
        while True:
            pass

    def reset(self, seed=None):
        return "never", {}

    def step(self, action):
        return "never", 0.0, True, False, {}
`;

const GOOD = `class QuickAnswerEnv:
    def reset(self, seed=None):
        return f"Say 3 (seed {seed}).", {}

    def step(self, action):
        return "Done.", 1.0, True, False, {}
`;

let ctx: E2EContext;
let hang = '';
let good = '';
beforeAll(async () => {
  ensureChildBuilt();
  ctx = await openWorkbench({ viewport: { width: 1440, height: 900 } });
  const catalog = ctx.app.services.episodes.ctx.d.catalog;
  hang = catalog.add(HANG, null, 'spin_forever.py');
  good = catalog.add(GOOD, null, 'quick_answer.py');
});
afterAll(async () => {
  await ctx?.close();
});

const pick = (page: Page, name: string, hash: string) => pickEnv(page, name, hash);
const episodeCount = () => countEpisodes(ctx);
const engineIdle = () => waitEngineIdle(ctx);

test("the status bar's Pyodide start shows progress, and Cancel stops the starting interpreters", async () => {
  const { page } = ctx;
  const rt = ctx.app.services.runtime;
  await page.waitForSelector('[data-testid=runtime-status]:has-text("Pyodide: idle")');
  // What a first episode or check does: the pool starts cold (8-10 s).
  const started = rt.pool.start().then(
    () => 'ready',
    (e: unknown) => String(e),
  );
  await page.waitForSelector('[data-testid=runtime-status]:has-text("Pyodide starting")', { timeout: 15_000 });
  await page.getByTestId('runtime-start-cancel').waitFor();
  await screenshot(page, 'cancel-pyodide-start-1440');
  await page.setViewportSize({ width: 1024, height: 768 });
  await screenshot(page, 'cancel-pyodide-start-1024');
  await page.getByTestId('runtime-start-cancel').click();
  await page.waitForSelector('[data-testid=runtime-status]:has-text("Pyodide: idle")');
  expect(await page.getByTestId('runtime-start-cancel').count()).toBe(0);
  // Stopped in the engine: no interpreter starting or kept, and the waiting start was told so.
  const st = rt.status().pool;
  expect({ started: st.started, starting: st.starting, ready: st.ready, busy: st.busy }).toEqual({ started: false, starting: 0, ready: 0, busy: 0 });
  expect(await started).toContain('stopped');
  await page.setViewportSize({ width: 1440, height: 900 });
  expect(ctx.errors).toEqual([]);
});

test('opening an episode shows progress while it waits, and Cancel stops it in the engine at 1440 and 1024 px', async () => {
  const { page } = ctx;
  await page.getByRole('button', { name: 'Episodes', exact: true }).click();
  await page.getByTestId('episodes-panel').waitFor();
  await pick(page, 'SpinForever', hang);

  // Cold: the pool starts on this open; the line says so and counts the time.
  await page.getByTestId('ep-open').click();
  const line = page.getByTestId('ep-opening');
  await line.waitFor();
  await page.waitForSelector('[data-testid=ep-opening]:has-text("interpreter is starting")');
  expect(await line.getByRole('progressbar').count()).toBe(1);
  await screenshot(page, 'cancel-open-1440');
  await page.getByTestId('ep-opening-cancel').click();
  await line.waitFor({ state: 'detached' });
  expect(await page.getByTestId('ep-msg').textContent()).toContain('Cancelled');
  await expect.poll(async () => page.getByTestId('ep-open').isEnabled(), { timeout: 30_000 }).toBe(true); // vitest's default is 1 s
  await engineIdle();
  expect(episodeCount()).toBe(0);
  await screenshot(page, 'cancel-open-1440-after');

  // Warm, at 1024 px: the load itself spins; Cancel kills its interpreter, which is replaced.
  await page.setViewportSize({ width: 1024, height: 768 });
  await ctx.app.services.runtime.pool.start();
  const restartsBefore = ctx.app.services.runtime.status().pool.restarted;
  await page.getByTestId('ep-open').click();
  await line.waitFor();
  // The load has reached an interpreter (it is busy with the spinning constructor) before Cancel.
  await expect.poll(() => ctx.app.services.runtime.status().pool.busy, { timeout: 30_000, interval: 100 }).toBe(1);
  await screenshot(page, 'cancel-open-1024');
  await page.getByTestId('ep-opening-cancel').click();
  await line.waitFor({ state: 'detached' });
  await engineIdle();
  expect(ctx.app.services.runtime.status().pool.restarted).toBe(restartsBefore + 1);
  expect(episodeCount()).toBe(0);

  // The engine answers the next open: a good game plays.
  await pick(page, 'QuickAnswer', good);
  await page.getByTestId('ep-open').click();
  await page.waitForSelector('[data-testid=episode-view][data-steps="1"]', { timeout: 30_000 });
  expect(episodeCount()).toBe(1);
  await screenshot(page, 'cancel-open-1024-after');
  expect(ctx.errors).toEqual([]);
});

test("the editor's SPADE loading checks show progress while the audit sandbox starts, and Cancel stops them in the engine", async () => {
  const { page } = ctx;
  await page.setViewportSize({ width: 1440, height: 900 });
  // What the engine holds for these checks (read for the assertions only): the audits in flight
  // and the audit's own sandbox pool, which has not started yet in this app.
  const audit = ctx.app.services.audit as unknown as { auditsInFlight: number; sandboxPool?: { status(): { busy: number } } };
  await page.keyboard.press('Control+P');
  await page.getByRole('dialog').locator('input').fill('SpinForeverEnv');
  await page.locator('.palette-list [role=option]', { hasText: 'edit in the editor' }).first().click();
  await page.getByTestId('env-editor').waitFor();
  await page.keyboard.press('Control+Shift+P');
  await page.getByRole('dialog', { name: 'Command palette' }).locator('input').fill('Run SPADE Loading Checks');
  await page.keyboard.press('Enter');
  const line = page.getByTestId('load-check-progress');
  await line.waitFor();
  expect(audit.auditsInFlight).toBe(1);
  await screenshot(page, 'cancel-loadcheck-1440');
  await page.setViewportSize({ width: 1024, height: 768 });
  await screenshot(page, 'cancel-loadcheck-1024');
  await page.getByTestId('load-check-progress-cancel').click();
  await line.waitFor({ state: 'detached' });
  // Stopped in the engine: no audit in flight, no interpreter working on the game.
  expect(audit.auditsInFlight).toBe(0);
  await expect.poll(() => audit.sandboxPool?.status().busy ?? 0, { timeout: 30_000, interval: 100 }).toBe(0);
  // No verdict was invented for checks that did not finish.
  expect(await page.getByTestId('load-check').count()).toBe(0);
  await screenshot(page, 'cancel-loadcheck-1024-after');
  expect(ctx.errors).toEqual([]);
});
