import { afterEach, describe, expect, it } from 'vitest';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';
import { openUrlPage, serveGuessingGames } from '../helpers/openenvPage';
import { startStandIn, type StandIn } from '../helpers/standInOpenAi';

let ctx: E2EContext | null = null;
let model: StandIn | null = null;
afterEach(async () => {
  await ctx?.close();
  ctx = null;
  await model?.close();
  model = null;
});

describe('an OpenEnv URL played by a model as a run record, and its wire audits kept, in Chromium', () => {
  for (const width of [1440, 1024]) {
    it(`plays with a model showing progress, opens the run in Runs, cancels one, and lists the audit after a reload (${width} px)`, async () => {
      // STAND-IN model (tests/helpers/standInOpenAi.ts). While `held` is set, an episode's first
      // request after the first episode waits: the page shows the progress of a run under way.
      let held: Promise<void> | null = null;
      let release: () => void = () => {};
      let started = 0;
      model = await startStandIn((b) => {
        const first = (b.messages as unknown[]).length === 1;
        if (first) started++;
        return { content: 'I guess \\boxed{50}', ...(held && first && started > 1 ? { after: held } : {}) };
      });
      const hold = () => {
        started = 0;
        held = new Promise<void>((ok) => (release = ok));
      };
      ctx = await openWorkbench({ viewport: { width, height: 900 } });
      const { page } = ctx;
      const url = await serveGuessingGames(ctx);
      await openUrlPage(page, url);
      await page.getByTestId('remote-open').click();
      await page.getByTestId('remote-open-view').waitFor();

      const panel = page.getByTestId('remote-play');
      await panel.getByTestId('remote-play-endpoint').fill(model.url);
      await panel.getByTestId('remote-play-model').fill('stand-in');
      await panel.getByTestId('remote-play-seeds').fill('2');
      await panel.getByTestId('remote-play-turns').fill('2');
      // serve-env takes a hint: both arms are offered.
      expect(await panel.getByTestId('remote-play-hint').isEnabled()).toBe(true);
      expect(await panel.textContent()).toContain('This server serves both arms');
      hold();
      await panel.getByTestId('remote-play-go').click();
      await page.waitForSelector('[data-testid=remote-play-progress]:has-text("1 / 4 episodes")');
      await panel.scrollIntoViewIfNeeded();
      await screenshot(page, `openenv-remote-play-progress-${width}`);
      held = null;
      release();
      await page.waitForSelector('[data-testid=remote-play-status]:has-text("done")');
      expect(await panel.getByTestId('remote-play-row').count()).toBe(4);
      const rows = await panel.getByTestId('remote-play-row').allTextContents();
      expect(rows.filter((r) => r.startsWith('hint')).length).toBe(2);
      expect(rows.filter((r) => r.startsWith('no hint')).length).toBe(2);
      await screenshot(page, `openenv-remote-play-done-${width}`);
      const runId = (await panel.locator('[data-testid=remote-play-result] code').first().textContent())!;
      expect(runId).toMatch(/^openenv-/);
      // A hinted first message went out with serve-env's hint.
      expect(model.requests.some((b) => JSON.stringify(b.messages).includes('HINT:'))).toBe(true);

      // The run in Runs: its row names the server as the selection, its detail the environment.
      await panel.getByTestId('remote-play-open-runs').click();
      const row = page.locator(`[data-testid=runs-row][data-run="${runId}"]`);
      await row.waitFor();
      expect(await row.textContent()).toContain(`openenv:${new URL(url).href}`);
      expect(await row.textContent()).toContain('4/4');
      await page.getByTestId('runs-detail').waitFor();
      expect(await page.getByTestId('runs-detail').textContent()).toMatch(/\w+Env \(OpenEnv 127\.0\.0\.1:\d+\)/);
      await screenshot(page, `openenv-remote-play-runs-${width}`);

      // Cancel: a second run held on its second episode stops, cancelled, with what finished kept.
      await page.locator('.tab-bar [role=tab]', { hasText: 'OpenEnv URL' }).click();
      hold();
      await panel.getByTestId('remote-play-go').click();
      await page.waitForSelector('[data-testid=remote-play-progress]:has-text("1 / 4 episodes")');
      await panel.getByTestId('remote-play-cancel').click();
      await page.waitForSelector('[data-testid=remote-play-status]:has-text("cancelled")');
      held = null;
      release();
      expect(await panel.getByTestId('remote-play-row').count()).toBe(1);
      expect(await panel.textContent()).toContain('Cancelled: what finished is kept');

      // The wire audit, then the page reloaded: the history lists it, each check's status.
      await page.getByTestId('remote-audit').click();
      await page.getByTestId('remote-audit-result').waitFor({ timeout: 60_000 });
      await page.getByTestId('wire-audit-row').first().waitFor();
      await page.reload();
      await page.waitForSelector('[data-testid=backend-status]:has-text("connected")');
      await page.getByTestId('remote-env-view').waitFor();
      await page.getByTestId('remote-url').fill(url);
      const history = page.getByTestId('wire-audit-history');
      await history.waitFor();
      expect(await history.getByTestId('wire-audit-row').count()).toBe(1);
      expect(await history.getByTestId('wire-audit-verdict').textContent()).toBe('pass');
      for (const id of ['wire.determinism', 'wire.seed_use', 'wire.malformed_action', 'wire.reward_range']) expect(await history.getByTestId(`wire-audit-${id}`).textContent()).toBe('pass');
      expect(await history.textContent()).toContain("not SPADE's audit");
      await history.scrollIntoViewIfNeeded();
      await screenshot(page, `openenv-remote-audit-history-${width}`);
      expect(await page.getByTestId('remote-env-view').evaluate((e) => e.scrollWidth <= e.clientWidth + 1)).toBe(true);
      expect(ctx.errors).toEqual([]);
    });
  }
});
