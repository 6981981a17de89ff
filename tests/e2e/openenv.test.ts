import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { openWorkbench, runCommand, screenshot, waitForPack, type E2EContext } from '../helpers/browser';

let ctx: E2EContext | null = null;
afterEach(async () => {
  await ctx?.close();
  ctx = null;
});

/** A /ws session of the app's server, as a trainer opens one. */
async function play(url: string): Promise<{ ask(m: unknown): Promise<Record<string, unknown>>; close(): void }> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws`);
  const waiting: ((f: Record<string, unknown>) => void)[] = [];
  ws.on('message', (d) => waiting.shift()?.(JSON.parse(d.toString()) as Record<string, unknown>));
  await new Promise<void>((ok, fail) => (ws.once('open', () => ok()), ws.once('error', fail)));
  return { ask: (m) => new Promise((r) => (waiting.push(r), ws.send(JSON.stringify(m)))), close: () => ws.close() };
}

describe('the OpenEnv server from the app, in Chromium', () => {
  for (const width of [1440, 1024]) {
    it(`starts over a selection, shows its URL and live sessions, and stops (${width} px)`, async () => {
      ctx = await openWorkbench({ viewport: { width, height: 860 } });
      const { page } = ctx;
      await waitForPack(ctx.app.services, 20);
      await runCommand(page, 'Serve Environments over OpenEnv');
      await page.getByTestId('openenv-view').waitFor();
      // Empty: every environment (the seed pack's tool-use ones are left out, said so).
      await page.waitForSelector('[data-testid=openenv-matches]:has-text("21 environments match")');
      // A port that cannot be is refused with a clear message and nothing runs.
      await page.getByTestId('openenv-port').fill('70000');
      await page.getByTestId('openenv-start').click();
      await page.waitForSelector('text=Port must be a whole number from 0 to 65535');
      await page.getByTestId('openenv-port').fill('0');
      await page.getByTestId('openenv-start').click();
      const urlText = await page.getByTestId('openenv-url').textContent();
      const url = String(urlText);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await page.getByTestId('openenv-session-count').textContent()).toBe('0 sessions');
      expect(await page.getByTestId('openenv-live').textContent()).toContain('16 environment versions (every environment)');
      expect(await page.getByTestId('openenv-live').textContent()).toContain('5 tool-use left out');

      const health = (await (await fetch(`${url}/health`)).json()) as { status: string };
      expect(health.status).toBe('healthy');
      const s = await play(url);
      const r = await s.ask({ type: 'reset', data: { task_id: 0 } });
      expect(r.type).toBe('observation');
      expect((await s.ask({ type: 'step', data: { message: '\\boxed{1}' } })).type).toBe('observation');
      // The page polls: the session appears with its step and task.
      await page.waitForSelector('[data-testid=openenv-session-count]:has-text("1 session")', { timeout: 10_000 });
      const row = page.getByTestId('openenv-sessions').locator('tbody tr');
      expect(await row.count()).toBe(1);
      await page.waitForFunction(() => document.querySelector('[data-testid=openenv-sessions] tbody tr td:nth-child(4)')?.textContent === '1', undefined, { timeout: 10_000 });
      // The episode went into the app's library like any other.
      const id = (r.data as { observation: { workbench_episode: number } }).observation.workbench_episode;
      expect(ctx.app.services.episodes.get(id).episode.seed).toBe((r.data as { observation: { seed: number } }).observation.seed);
      await screenshot(page, `openenv-serving-${width}`);
      // The view fits the window: no sideways scroll.
      expect(await page.getByTestId('openenv-view').evaluate((e) => e.scrollWidth <= e.clientWidth + 1)).toBe(true);

      s.close();
      await page.getByTestId('openenv-stop').click();
      await page.getByTestId('openenv-start').waitFor();
      await expect(fetch(`${url}/health`)).rejects.toThrow();
      await screenshot(page, `openenv-stopped-${width}`);
      expect(ctx.errors).toEqual([]);
    });
  }
});
