import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';
import { ingest } from '../../core/memory/repository';

/**
 * A game SPADE refuses at every play load (reset() returns None: synthetic_game_env.py:274-279),
 * which its own solution() would win: Play in SPADE mode says SPADE's refusal, in SPADE's words,
 * and opens no episode (it used to open and play it).
 */
const NAME = 'l33_refused_reset_returns_none';
const FILE = join(__dirname, '..', 'fixtures', 'spade-corpus', `${NAME}.py`);
const MESSAGE = "SPADE refuses this game at load: Game reset() failed: reset() returned invalid type: <class 'NoneType'>";

let ctx: E2EContext | null = null;
afterEach(async () => {
  await ctx?.close();
  ctx = null;
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
});
