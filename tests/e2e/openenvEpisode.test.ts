import { afterEach, describe, expect, it } from 'vitest';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';
import { openUrlPage, serveGuessingGames } from '../helpers/openenvPage';

let ctx: E2EContext | null = null;
afterEach(async () => {
  await ctx?.close();
  ctx = null;
});

describe('an environment at an OpenEnv URL, in the episode view (Chromium)', () => {
  for (const width of [1440, 1024]) {
    it(`opens it as a recorded episode, steps it, scrubs its state and replays it (${width} px)`, async () => {
      ctx = await openWorkbench({ viewport: { width, height: 860 } });
      const { page } = ctx;
      const url = await serveGuessingGames(ctx);
      await openUrlPage(page, url);
      await page.getByTestId('remote-seed').fill('1');
      await page.getByTestId('remote-hint').check();
      await page.getByTestId('remote-open-episode').click();

      const view = page.getByTestId('episode-view');
      await view.waitFor();
      expect(await page.getByTestId('remote-episode-note').textContent()).toContain(`Played over OpenEnv at ${new URL(url).href}`);
      // The first observation is the server's, with SPADE's hint in it (the server's, not injected again).
      expect((await page.getByTestId('step-observation').textContent())!.split('HINT:').length).toBe(2);
      // No scripted policy or model turn of ours on a remote game.
      expect(await page.getByTestId('policy').count()).toBe(0);
      expect(await page.getByTestId('model-turn').count()).toBe(0);

      for (const [i, a] of ['\\boxed{50}', '\\boxed{25}'].entries()) {
        await page.getByTestId('action-input').fill(a);
        await page.getByTestId('action-input-go').click();
        await page.waitForFunction((n) => document.querySelector('[data-testid=episode-view]')?.getAttribute('data-steps') === String(n), i + 2);
      }
      expect(await page.getByTestId('step-list').locator('li').nth(2).textContent()).toContain('\\boxed{25}');
      // The state is the observation and the server's state answer; what changed is listed.
      await page.getByTestId('state-tree').waitFor();
      expect(await page.getByTestId('state-tree').textContent()).toContain('server_state');
      expect(await page.getByTestId('state-changes').textContent()).toContain('step_count');
      await screenshot(page, `openenv-episode-stepped-${width}`);

      // Scrub back to the reset: the record is read, the server's session stays where it is.
      await page.getByTestId('step-list').locator('li').first().click();
      await page.waitForFunction(() => document.querySelector('[data-testid=timeline-pos]')?.textContent?.startsWith('0 /'));
      expect(await page.getByTestId('step-observation').textContent()).toContain('HINT:');

      await page.getByTestId('replay').click();
      await page.waitForSelector('[data-testid=replay-result]:has-text("Replayed 3 steps: no divergence")');
      await screenshot(page, `openenv-episode-replayed-${width}`);

      // It stays in Episodes as any episode does, named by its server.
      const rows = await ctx.app.services.episodes.list({ limit: 50, offset: 0 });
      expect(rows.rows.filter((r) => r.runtime === 'openenv').map((r) => r.origin).sort()).toEqual(['played', 'replay']);
      expect(await view.evaluate((e) => e.scrollWidth <= e.clientWidth + 1)).toBe(true);

      // The server serves several games: another one opens as its own episode, named as that game.
      await page.getByRole('tab', { name: 'OpenEnv URL' }).click();
      const picker = page.getByTestId('remote-game');
      await picker.waitFor();
      const names = await picker.locator('option').allTextContents();
      expect(names.length).toBeGreaterThan(1);
      await picker.selectOption({ label: names[1]! });
      await page.getByTestId('remote-open-episode').click();
      await page.waitForFunction((n) => document.querySelector('.tab-pane:not([hidden]) [data-testid=episode-view] .ep-header strong')?.textContent?.startsWith(`${n} (OpenEnv`), names[1]!);
      await screenshot(page, `openenv-episode-second-game-${width}`);
      expect(ctx.errors).toEqual([]);
    });
  }
});
