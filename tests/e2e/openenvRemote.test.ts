import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';
import { openUrlPage, serveGuessingGames } from '../helpers/openenvPage';

let ctx: E2EContext | null = null;

/** A port nothing listens on (it was free a moment ago). */
function closedPort(): Promise<number> {
  return new Promise((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as AddressInfo).port;
      s.close(() => ok(p));
    });
  });
}
afterEach(async () => {
  await ctx?.close();
  ctx = null;
});

describe('an environment at an OpenEnv URL, in Chromium', () => {
  for (const width of [1440, 1024]) {
    it(`opens a served environment by URL, steps it, replays it and shows the wire audit (${width} px)`, async () => {
      ctx = await openWorkbench({ viewport: { width, height: 860 } });
      const { page } = ctx;
      const url = await serveGuessingGames(ctx);
      await openUrlPage(page, url);
      // Nothing answers there: a clear error, nothing opened.
      const dead = await closedPort();
      await page.getByTestId('remote-url').fill(`http://127.0.0.1:${dead}`);
      await page.getByTestId('remote-open').click();
      await page.waitForSelector(`text=cannot reach http://127.0.0.1:${dead} (nothing answers there)`);
      expect(await page.getByTestId('remote-open-view').count()).toBe(0);

      await page.getByTestId('remote-url').fill(url);
      await page.getByTestId('remote-seed').fill('1');
      await page.getByTestId('remote-hint').check();
      await page.getByTestId('remote-open').click();
      await page.getByTestId('remote-open-view').waitFor();
      expect(await page.getByTestId('remote-name').textContent()).toBe('spade-workbench');
      expect(await page.getByTestId('remote-hint-note').textContent()).toContain('Hint: on (the server serves both arms)');
      // The first observation is SPADE's, with the hint appended.
      expect(await page.getByTestId('remote-observation').textContent()).toContain('HINT:');

      await page.getByTestId('remote-action').fill('\\boxed{50}');
      await page.getByTestId('remote-step').click();
      await page.waitForFunction(() => document.querySelectorAll('[data-testid=remote-turn]').length === 2);
      expect(await page.getByTestId('remote-turn').nth(1).textContent()).toContain('\\boxed{50}');
      const stepped = await page.getByTestId('remote-observation').textContent();
      expect(stepped!.length).toBeGreaterThan(0);
      // A malformed action is not possible from a text field; a step after replaying is on the same session.
      await page.getByTestId('remote-replay').click();
      await page.waitForSelector('[data-testid=remote-replay-result]:has-text("The 2 turn(s) since the last reset replayed the same on a fresh session")');
      // Clicking the reset turn shows its observation again (scrubbing the record).
      await page.getByTestId('remote-turn').first().click();
      expect(await page.getByTestId('remote-observation').textContent()).toContain('HINT:');

      await page.getByTestId('remote-audit').click();
      await page.getByTestId('remote-audit-result').waitFor({ timeout: 60_000 });
      for (const id of ['wire.determinism', 'wire.seed_use', 'wire.malformed_action', 'wire.reward_range']) expect(await page.getByTestId(`wire-check-${id}`).locator('td').first().textContent()).toBe('pass');
      expect(await page.getByTestId('remote-audit-result').textContent()).toContain("not SPADE's audit");
      await screenshot(page, `openenv-remote-stepped-${width}`);
      await page.getByTestId('remote-audit-result').scrollIntoViewIfNeeded();
      await screenshot(page, `openenv-remote-audit-${width}`);
      expect(await page.getByTestId('remote-env-view').evaluate((e) => e.scrollWidth <= e.clientWidth + 1)).toBe(true);
      expect(ctx.errors).toEqual([]);
    });
  }
});
