import { afterAll, beforeAll, expect, test } from 'vitest';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';
import { ensureChildBuilt } from '../integration/runtime/helpers';
import { engineIdle, episodeCount, pickEnv, stepRows } from '../helpers/cancelWaits';

/**
 * Work on an open episode that waits on its interpreter (a step, "Run until", a reopen, "Replay &
 * compare") shows progress after a second and has a Cancel that stops it in the engine. The game
 * spins forever on an action that says "spin" (SPADE's load probes never do), so the wait is real.
 */
const SPIN_ON_STEP = `class SpinOnStepEnv:
    def __init__(self, max_turns=30):
        self.turn = 0

    def reset(self, seed=None):
        self.turn = 0
        return "Say ok.", {}

    def step(self, action):
        while "spin" in action:
            pass
        self.turn += 1
        return "fine", 0.0, False, False, {}
`;

let ctx: E2EContext;
let hash = '';
beforeAll(async () => {
  ensureChildBuilt();
  ctx = await openWorkbench({ viewport: { width: 1440, height: 900 } });
  hash = ctx.app.services.episodes.ctx.d.catalog.add(SPIN_ON_STEP, null, 'spin_on_step.py');
  await ctx.app.services.runtime.pool.start();
});
afterAll(async () => {
  await ctx?.close();
});

const busy = () => ctx.app.services.runtime.status().pool.busy;
const restarted = () => ctx.app.services.runtime.status().pool.restarted;
/** The interpreter a Cancel killed is replaced (a cold start): wait for it, so the next wait is the game's. */
const replaced = () => expect.poll(() => ctx.app.services.runtime.status().pool.starting, { timeout: 120_000, interval: 200 }).toBe(0);

test('a step and "Run until done" show progress, and Cancel stops their interpreter with nothing recorded', async () => {
  const { page } = ctx;
  await page.getByRole('button', { name: 'Episodes', exact: true }).click();
  await page.getByTestId('episodes-panel').waitFor();
  await pickEnv(page, 'SpinOnStep', hash);
  await page.getByTestId('ep-open').click();
  await page.waitForSelector('[data-testid=episode-view][data-steps="1"], [data-testid=ep-msg]', { timeout: 60_000 });
  expect(await page.getByTestId('ep-msg').count(), (await page.getByTestId('ep-msg').allTextContents()).join()).toBe(0);
  await page.getByTestId('action-input').fill('ok');
  await page.getByTestId('action-input-go').click();
  await page.waitForSelector('[data-testid=episode-view][data-steps="2"]');
  const rows = stepRows(ctx);
  expect(rows).toBe(2);

  // A step that never answers: the line says what waits and for how long; Cancel kills its interpreter.
  const before = restarted();
  await page.getByTestId('action-input').fill('spin');
  await page.getByTestId('action-input-go').click();
  const line = page.getByTestId('ep-work');
  await line.waitFor();
  expect(await line.textContent()).toContain('Step');
  expect(await line.getByRole('progressbar').count()).toBe(1);
  expect(busy()).toBe(1);
  await screenshot(page, 'cancel-step-1440');
  await line.getByTestId('ep-work-cancel').click();
  await line.waitFor({ state: 'detached' });
  await engineIdle(ctx);
  expect(restarted()).toBe(before + 1);
  expect(stepRows(ctx)).toBe(rows);
  await replaced();
  expect(await page.getByTestId('ep-note').textContent()).toContain('Step cancelled');
  expect(await page.getByTestId('action-input-go').isEnabled()).toBe(true);
  await screenshot(page, 'cancel-step-1440-after');

  // "Run until done" at 1024 px: the episode is no longer live, so it is reopened (its two steps
  // re-executed) and then its first policy step spins. Cancel again leaves nothing behind.
  await page.setViewportSize({ width: 1024, height: 768 });
  await page.getByTestId('policy').selectOption('script');
  await page.getByTestId('script').fill('\\boxed{spin}');
  await page.getByTestId('run').click();
  await line.waitFor();
  expect(await line.textContent()).toContain('Run until done');
  expect(await line.textContent()).toContain('reopening the recording');
  await expect.poll(busy, { timeout: 30_000, interval: 100 }).toBe(1);
  await screenshot(page, 'cancel-run-1024');
  await line.getByTestId('ep-work-cancel').click();
  await line.waitFor({ state: 'detached' });
  await engineIdle(ctx);
  expect(restarted()).toBe(before + 2);
  expect(stepRows(ctx)).toBe(rows);
  expect(episodeCount(ctx)).toBe(1);
  await replaced();

  // The engine answers at once afterwards: the next step reopens the episode and plays.
  await page.getByTestId('action-input').fill('ok');
  await page.getByTestId('action-input-go').click();
  await page.waitForSelector('[data-testid=episode-view][data-steps="3"]', { timeout: 60_000 });
  expect(stepRows(ctx)).toBe(rows + 1);
  expect(ctx.errors).toEqual([]);
});

test('"Replay & compare" of a recording whose step now spins shows progress, and Cancel records no replay', async () => {
  const { page } = ctx;
  await page.setViewportSize({ width: 1440, height: 900 });
  // A recording of this game with a step it now never answers (as an imported trajectory could have).
  const eps = ctx.app.services.episodes;
  const first = eps.list({ limit: 1, offset: 0 }).rows[0]!;
  const line0 = eps.exportJsonl([first.id]).text.replace('"action":"ok"', '"action":"spin"');
  const imported = eps.importJsonl(line0).ids[0]!;
  const rows = stepRows(ctx);
  const episodes = episodeCount(ctx);
  await page.locator(`[data-testid=ep-item][data-id="${imported}"]`).click();
  const view = page.locator(`[data-testid=episode-view][data-episode="${imported}"]`);
  await view.waitFor();
  await replaced();
  const before = restarted();
  // The first test's episode is still open in its tab, with its session: the replay's comes and goes.
  const sessions = ctx.app.services.runtime.status().sessions;
  await view.getByTestId('replay').click();
  const line = view.getByTestId('ep-work');
  await line.waitFor();
  expect(await line.textContent()).toContain('Replay & compare');
  await expect.poll(busy, { timeout: 30_000, interval: 100 }).toBe(1);
  await screenshot(page, 'cancel-replay-1440');
  await page.setViewportSize({ width: 1024, height: 768 });
  await screenshot(page, 'cancel-replay-1024');
  await line.getByTestId('ep-work-cancel').click();
  await line.waitFor({ state: 'detached' });
  const rt = ctx.app.services.runtime;
  await expect.poll(() => ({ sessions: rt.status().sessions, busy: rt.status().pool.busy }), { timeout: 30_000, interval: 100 }).toEqual({ sessions, busy: 0 });
  expect(restarted()).toBe(before + 1);
  // Nothing written: no replay episode, no steps, no divergence on the recording.
  expect(episodeCount(ctx)).toBe(episodes);
  expect(stepRows(ctx)).toBe(rows);
  expect(eps.get(imported).episode.divergenceStep).toBeNull();
  expect(await view.getByTestId('replay-result').count()).toBe(0);
  expect(ctx.errors).toEqual([]);
});

test('"Import & replay" of a trajectory that makes the game spin shows progress, and Cancel imports nothing', async () => {
  const { page } = ctx;
  await page.setViewportSize({ width: 1440, height: 900 });
  await replaced();
  // The seed search holds two sessions (the scan and the confirmation); with the earlier episodes
  // closed each gets an interpreter of its own, which Cancel can kill (a shared one runs to its limit).
  await ctx.app.services.episodes.closeAll();
  const episodes = episodeCount(ctx);
  const rows = stepRows(ctx);
  const before = restarted();
  // No seed recorded: the seed search confirms seed 0 by playing the trajectory, whose action spins.
  const messages = [
    { role: 'user', content: 'Say ok.' },
    { role: 'assistant', content: '\\boxed{spin}' },
    { role: 'user', content: 'fine' },
  ];
  await page.getByTestId('ep-import-text').fill(JSON.stringify(messages));
  await page.getByTestId('ep-import-run').click();
  const line = page.getByTestId('ep-importing');
  await line.waitFor();
  expect(await line.textContent()).toContain('Importing and replaying');
  await expect.poll(busy, { timeout: 30_000, interval: 100 }).toBe(1);
  await screenshot(page, 'cancel-import-1440');
  await line.getByTestId('ep-importing-cancel').click();
  await line.waitFor({ state: 'detached' });
  expect(await page.getByTestId('ep-msg').textContent()).toContain('Cancelled: nothing was imported.');
  await expect.poll(busy, { timeout: 30_000, interval: 100 }).toBe(0);
  // The spinning interpreter was killed (the idle scan's session goes with its own, as both were the import's).
  expect(restarted()).toBeGreaterThan(before);
  expect(ctx.app.services.runtime.status().sessions).toBe(0);
  expect(episodeCount(ctx)).toBe(episodes);
  expect(stepRows(ctx)).toBe(rows);
  expect(ctx.errors).toEqual([]);
});
