import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';
import { startStandIn, type StandIn } from '../helpers/standInOpenAi';
import { endpointSchema } from '../../core/api/calls/models';
import { ingest } from '../../core/memory/repository';
import { sha256 } from '../../core/memory/parse';

/**
 * A game SPADE refuses at every play load (reset() returns None: synthetic_game_env.py:274-279),
 * which its own solution() would win: Play in SPADE mode says SPADE's refusal, in SPADE's words,
 * and opens no episode (it used to open and play it).
 */
const NAME = 'l33_refused_reset_returns_none';
const FILE = join(__dirname, '..', 'fixtures', 'spade-corpus', `${NAME}.py`);
const MESSAGE = "SPADE refuses this game at load: Game reset() failed: reset() returned invalid type: <class 'NoneType'>";

let ctx: E2EContext | null = null;
let server: StandIn | null = null;
afterEach(async () => {
  await ctx?.close();
  ctx = null;
  await server?.close();
  server = null;
});

describe("SPADE's refusal in Chromium", () => {
  for (const width of [1440, 1024]) {
    it(`Play on a game SPADE refuses shows SPADE's message and opens nothing (${width} px)`, { timeout: 180_000 }, async () => {
      ctx = await openWorkbench({ viewport: { width, height: 860 } });
      const { page } = ctx;
      ingest(ctx.app.services.db, { source: readFileSync(FILE, 'utf8'), path: FILE, fileStem: NAME });
      await page.getByRole('button', { name: 'Episodes', exact: true }).click();
      await page.getByTestId('episodes-panel').waitFor();
      await page.getByTestId('ep-env-search').fill('NoneResetGuessEnv');
      await page.waitForFunction(() => {
        const sel = document.querySelector('[data-testid=ep-env]') as HTMLSelectElement | null;
        return !!sel && sel.options.length > 0 && sel.options[0]!.text.startsWith('NoneResetGuessEnv');
      });
      await page.getByTestId('ep-env').selectOption({ index: 0 });
      await page.getByTestId('ep-open').click();
      const msg = page.getByTestId('ep-msg');
      await msg.waitFor({ timeout: 120_000 });
      await page.waitForFunction((m) => document.querySelector('[data-testid=ep-msg]')?.textContent?.includes(m), MESSAGE, { timeout: 120_000 });
      expect(await msg.textContent()).toContain(MESSAGE);
      expect(await page.locator('[data-testid=episode-view]').count()).toBe(0);
      expect(ctx.app.services.episodes.list({ limit: 10, offset: 0 }).total).toBe(0);
      // The message is read whole, not cut off at this width.
      const box = await msg.boundingBox();
      expect(box!.x + box!.width).toBeLessThanOrEqual(width);
      await screenshot(page, `spade-refusal-play-${width}`);
    });
  }

  it("a model run on it: the Runs page says SPADE's refusal, hinted plays count 0, unhinted ones fail (1440 and 1024 px)", { timeout: 240_000 }, async () => {
    server = await startStandIn(() => ({ content: 'I guess \\boxed{3}' }));
    ctx = await openWorkbench({ viewport: { width: 1440, height: 860 } });
    const { page } = ctx;
    const s = ctx.app.services;
    const source = readFileSync(FILE, 'utf8');
    ingest(s.db, { source, path: FILE, fileStem: NAME, hint: 'Guess well.' });
    const hash = sha256(source);
    const run = await s.models.play({ hashes: [hash], endpoint: endpointSchema.parse({ baseUrl: server.url, model: 'a', retries: 0, concurrency: 2 }), seeds: 2, seedStart: 0, arms: ['hint', 'nohint'], runtime: 'pyodide', runId: 'run-refused', selection: 'refused', estimator: 'paired' });
    // The model was never asked: SPADE plays nothing of a game it refuses.
    expect(server.requests.length).toBe(0);
    expect(run.episodes.map((e) => [e.hint, e.return, e.failed, e.endedBy])).toEqual([
      [true, 0, false, 'refused'],
      [false, null, true, 'refused'],
      [true, 0, false, 'refused'],
      [false, null, true, 'refused'],
    ]);
    await page.keyboard.press('Control+Shift+P');
    await page.getByRole('dialog', { name: 'Command palette' }).locator('input').fill('Show Model Runs');
    await page.keyboard.press('Enter');
    await page.getByTestId('runs-view').waitFor();
    const row = page.locator('[data-testid=runs-row][data-run=run-refused]');
    await row.waitFor();
    await row.getByTestId('runs-pick-a').check();
    await page.getByTestId('runs-detail').waitFor();
    await page.waitForSelector('[data-testid=runs-episode][data-ended=refused]');
    const titles = await page.getByTestId('runs-episode').evaluateAll((bs) => bs.map((b) => b.getAttribute('title') ?? ''));
    expect(titles).toHaveLength(4);
    for (const t of titles) expect(t).toContain(MESSAGE);
    expect(await page.getByTestId('runs-detail').textContent()).toContain(MESSAGE);
    // The reason wraps inside its cell: at 1440 the episode buttons after it stay in view (at 1024
    // the Runs page as a whole is wider than the window, issue 46's polish item, not this cell).
    for (const width of [1440, 1024]) {
      await page.setViewportSize({ width, height: 860 });
      const last = await page.getByTestId('runs-episode').last().boundingBox();
      if (width === 1440) expect(last!.x + last!.width).toBeLessThanOrEqual(width);
      expect(await page.getByTestId('runs-env-seeds').textContent()).toContain(MESSAGE);
      await screenshot(page, `spade-refusal-runs-${width}`);
    }
  });
});
